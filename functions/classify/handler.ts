import type { Logger } from '@aws-lambda-powertools/logger';
import { parseClassifyInput } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { jsonResult } from '../../shared/http/responses.js';
import type { Classifier } from '../../shared/ports.js';

export interface ClassifyHandlerDeps {
  classifier: Classifier;
  logger: Logger;
}

/** `POST /v1/classify` and `POST /api/v1/classify`: suggests a type for a title and body; uses no quota. */
export function createClassifyHandler({ classifier, logger }: ClassifyHandlerDeps) {
  const classify = async (_event: unknown, body: Record<string, unknown>) => {
    // The model reads the text alone: an agent_id or a type sent with it is checked and not used.
    const { title, body: text } = parseClassifyInput(body);
    const { type, confidence, scores, model } = await classifier.classify({ title, body: text });
    return jsonResult(200, { type, confidence, scores, model });
  };
  return apiFunction(logger, 'classify', { memory_classify: classify, memory_classify_alias: classify });
}
