import type { Logger } from '@aws-lambda-powertools/logger';
import { parseClassifyInput } from '../../shared/domain/validation.js';
import { apiRoute } from '../../shared/http/api-route.js';
import type { JsonEvent } from '../../shared/http/json-body.js';
import { jsonResult } from '../../shared/http/responses.js';
import type { Classifier } from '../../shared/ports.js';

export interface ClassifyHandlerDeps {
  classifier: Classifier;
  logger: Logger;
}

/** `POST /v1/classify` and `POST /api/v1/classify`: suggests a type for a title and body; uses no quota. */
export function createClassifyHandler({ classifier, logger }: ClassifyHandlerDeps) {
  return apiRoute(logger, { jsonBody: true }).handler(async (event) => {
    const input = parseClassifyInput((event as unknown as JsonEvent).body);
    const { type, confidence, scores, model } = await classifier.classify(input);
    return jsonResult(200, { type, confidence, scores, model });
  });
}
