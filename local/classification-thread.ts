import { Logger } from '@aws-lambda-powertools/logger';
import { parentPort, workerData } from 'node:worker_threads';
import { createClassifierWorker } from '../functions/classifier/handler.js';
import { openRelaxedDatabase } from '../shared/adapters/local/database.js';
import { SqliteJobQueue } from '../shared/adapters/local/job-queue.js';
import { SqliteRecordStore } from '../shared/adapters/local/record-store.js';
import { defaultClassifier } from '../shared/classifiers/default.js';
import type { ClassificationThreadData } from './classification.js';
import { JobLoop } from './job-loop.js';

/**
 * The classification worker of the embedded server on a thread of its own (classification.ts): the job
 * loop, the classifier Lambda's handler and the model run here, on a connection of their own, so that
 * classifying never holds up the thread that answers requests.
 */
if (!parentPort) throw new Error('classification-thread.ts runs as a worker thread of ClassificationThread');
const port = parentPort;
const { file, pollMs, logLevel } = workerData as ClassificationThreadData;

// Its commits need not wait for the disk (synchronous = NORMAL): a pass commits a record's classification
// before it deletes the record's job, and WAL recovery keeps a prefix of the commits, so a power cut that
// undoes a classification undoes the job's deletion too, and the job runs again.
const db = openRelaxedDatabase(file);

const logger = new Logger({ serviceName: 'memory', logLevel });
const jobs = new SqliteJobQueue(db);
const records = new SqliteRecordStore(db);
const loop = new JobLoop({ jobs, worker: createClassifierWorker({ records, classifier: defaultClassifier, logger: logger.createChild() }), logger, pollMs });

port.on('message', (message: 'stop') => {
  if (message !== 'stop') return;
  void loop.stop().then(() => {
    db.close();
    port.close();
  });
});
loop.start();
