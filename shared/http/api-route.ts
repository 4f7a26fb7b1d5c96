import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { operationAt, type ApiFunction, type OperationOf } from '../api/operations.js';
import { requireAccess } from './access.js';
import { consoleCors } from './cors.js';
import { httpErrors } from './error-handler.js';
import { readJsonBody } from './json-body.js';

/** The code of one operation: the request, and (for an operation with a body) the body read as a JSON object. */
type OperationHandler<O> = (
  event: APIGatewayProxyEvent,
  body: O extends { body: object } ? Record<string, unknown> : undefined,
) => Promise<APIGatewayProxyResult>;

/** The code of every operation the registry gives to function `F`, by operationId: no more, no fewer. */
export type OperationHandlers<F extends ApiFunction> = { [Id in OperationOf<F>['operationId']]: OperationHandler<Extract<OperationOf<F>, { operationId: Id }>> };

/**
 * The Lambda handler of function `fn`: the middy chain every API route shares, in order (the Lambda context
 * in the logs, the console's CORS headers (cors.ts; before the error mapper, so that they reach its answers
 * too), the one error mapper, the authenticated principal and the scope its operation needs (access.ts)),
 * then the operation the request's method and resource name in the registry, its JSON body read first if it
 * declares one. A request for an operation of another function is a wiring bug: a 500.
 */
export function apiFunction<F extends ApiFunction>(logger: Logger, fn: F, handlers: OperationHandlers<F>) {
  const byId = handlers as unknown as Record<string, (event: APIGatewayProxyEvent, body: Record<string, unknown> | undefined) => Promise<APIGatewayProxyResult>>;
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger))
    .use(consoleCors())
    .use(httpErrors(logger))
    .use(requireAccess())
    .handler(async (event) => {
      const operation = operationAt(event.httpMethod, event.resource);
      const handler = operation?.fn === fn ? byId[operation.operationId] : undefined;
      if (operation === undefined || handler === undefined) throw new Error(`the ${fn} function has no operation at ${event.httpMethod} ${event.resource}`);
      return handler(event, 'body' in operation ? readJsonBody(event) : undefined);
    });
}

/** The methods a route answers: its own, and HEAD wherever it answers GET (HTTP's rule: GET without the body). */
export function answeredMethods(method: string): string[] {
  return method === 'GET' ? ['GET', 'HEAD'] : [method];
}
