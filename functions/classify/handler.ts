import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { parseClassifyInput } from '../../shared/domain/validation.js';
import { requirePrincipal } from '../../shared/http/auth-context.js';
import { httpErrors } from '../../shared/http/error-handler.js';
import { jsonBody, type JsonEvent } from '../../shared/http/json-body.js';
import { jsonResult } from '../../shared/http/responses.js';
import type { Classifier } from '../../shared/ports.js';

export interface ClassifyHandlerDeps {
  classifier: Classifier;
  logger: Logger;
}

/** `POST /v1/classify` and `POST /api/v1/classify`: suggests a type for a title and body; uses no quota. */
export function createClassifyHandler({ classifier, logger }: ClassifyHandlerDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger))
    .use(httpErrors(logger))
    .use(requirePrincipal())
    .use(jsonBody())
    .handler(async (event) => {
      const input = parseClassifyInput((event as unknown as JsonEvent).body);
      const { type, confidence, scores, model } = await classifier.classify(input);
      return jsonResult(200, { type, confidence, scores, model });
    });
}
