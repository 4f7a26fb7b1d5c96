import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { AppError } from '../domain/errors.js';

/**
 * The per-tenant usage metrics finance reads in CloudWatch. Each is emitted in embedded metric format with
 * the dimensions `service` and `tenant`, one document per request. docs/metrics.md lists what each is for.
 */
export const USAGE_METRIC = {
  recordsWritten: 'RecordsWritten',
  bytesStored: 'BytesStored',
  queriesServed: 'QueriesServed',
  recordsDeleted: 'RecordsDeleted',
  recordQuotaRejections: 'RecordQuotaRejections',
  queryQuotaRejections: 'QueryQuotaRejections',
} as const;

/** The dimension that carries the tenant id. */
export const TENANT_DIMENSION = 'tenant';

/** Records usage on a Metrics instance, or does nothing when there is none (the local mode). */
export interface UsageMetrics {
  /** A new record was stored (not an idempotent replay), with its size in bytes. */
  recordWritten(tenantId: string, bytes: number): void;
  /** A search answered 200. */
  queryServed(tenantId: string): void;
  /** Records were deleted: one by id, or a forget's (a forget job counts what it matched when it starts). */
  recordsDeleted(tenantId: string, count: number): void;
  /** Counts the error when it is a quota rejection; any other error is left alone. */
  rejected(tenantId: string, error: unknown): void;
}

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** Publishes at once, one document per event, so requests that count nothing print nothing. */
export function usageMetrics(metrics: Metrics | undefined): UsageMetrics {
  const emit = (tenantId: string, values: [name: string, unit: Unit, value: number][]) => {
    if (!metrics) return;
    metrics.addDimension(TENANT_DIMENSION, tenantId);
    for (const [name, unit, value] of values) metrics.addMetric(name, unit, value);
    metrics.publishStoredMetrics();
  };
  return {
    recordWritten(tenantId, bytes) {
      emit(tenantId, [
        [USAGE_METRIC.recordsWritten, MetricUnit.Count, 1],
        [USAGE_METRIC.bytesStored, MetricUnit.Bytes, bytes],
      ]);
    },
    queryServed(tenantId) {
      emit(tenantId, [[USAGE_METRIC.queriesServed, MetricUnit.Count, 1]]);
    },
    recordsDeleted(tenantId, count) {
      if (count > 0) emit(tenantId, [[USAGE_METRIC.recordsDeleted, MetricUnit.Count, count]]);
    },
    rejected(tenantId, error) {
      if (!(error instanceof AppError)) return;
      if (error.code === 'record_quota_exceeded') {
        emit(tenantId, [[USAGE_METRIC.recordQuotaRejections, MetricUnit.Count, 1]]);
        // Once more without the tenant: the 5XX alarm subtracts these 507s from API Gateway's 5XX count.
        metrics?.singleMetric().addMetric(USAGE_METRIC.recordQuotaRejections, MetricUnit.Count, 1);
      }
      if (error.code === 'query_quota_exceeded') emit(tenantId, [[USAGE_METRIC.queryQuotaRejections, MetricUnit.Count, 1]]);
    },
  };
}
