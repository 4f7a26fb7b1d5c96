import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { defaultClassifier } from '../../shared/classifiers/default.js';
import { createClassifyHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of `POST /v1/classify`: the in-process classifier, no I/O. */
export const handler = createClassifyHandler({
  classifier: defaultClassifier,
  logger: new Logger({ serviceName: config.serviceName }),
});
