// The second run of the HTTP suites: on DynamoDB Local, with the stream poller and the real indexer.
process.env.MEMORY_TEST_BACKEND = 'dynamodb';
