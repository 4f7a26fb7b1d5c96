import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { requireAccess } from './access.js';
import { consoleCors } from './cors.js';
import { httpErrors } from './error-handler.js';
import { jsonBody } from './json-body.js';

/**
 * The middy chain every API route shares, in order: the Lambda context in the logs, the console's CORS
 * headers (cors.ts; before the error mapper, so that they reach its answers too), the one error mapper,
 * the authenticated principal and the scope its route needs (access.ts), and (for routes with a body) the
 * JSON body. Add the route's handler to it.
 */
export function apiRoute(logger: Logger, options: { jsonBody: boolean }) {
  const route = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger))
    .use(consoleCors())
    .use(httpErrors(logger))
    .use(requireAccess());
  return options.jsonBody ? route.use(jsonBody()) : route;
}

/** The methods a route answers: its own, and HEAD wherever it answers GET (HTTP's rule: GET without the body). */
export function answeredMethods(method: string): string[] {
  return method === 'GET' ? ['GET', 'HEAD'] : [method];
}
