import type { Logger } from '@aws-lambda-powertools/logger';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { AppError } from '../domain/errors.js';
import { errorResult, internalErrorResult } from './responses.js';

/**
 * The one place that turns errors into responses: an AppError becomes its status and JSON body; anything
 * else is logged with the request id and becomes a 500 that shows only that id.
 */
export function httpErrors<TEvent, TContext extends Context>(
  logger: Logger,
): MiddlewareObj<TEvent, APIGatewayProxyResult, Error, TContext> {
  return {
    onError: async (request) => {
      const err = request.error;
      if (err instanceof AppError) {
        request.response = errorResult(err);
        return;
      }
      const requestId = request.context.awsRequestId;
      logger.error('unhandled error', { request_id: requestId, error: err as Error });
      request.response = internalErrorResult(requestId);
    },
  };
}
