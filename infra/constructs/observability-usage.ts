import { Duration } from 'aws-cdk-lib';
import { GraphWidget, MathExpression, SingleValueWidget, TableLayout, TableSummaryColumn, TableWidget, TextWidget, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { TENANT_DIMENSION, USAGE_METRIC } from '../../shared/http/usage-metrics.js';

/** Powertools Metrics puts the service name in this dimension of every metric it emits. */
const SERVICE_DIMENSION = 'service';

/**
 * How many tenants a Metrics Insights graph draws: the top 50 by their sum over the time range. More lines
 * than that cannot be told apart; the tables list them all (up to 500).
 */
const INSIGHTS_TOP = 50;

/**
 * The bottom of the dashboard, for finance: each usage metric per tenant, as totals, tables over the chosen
 * month and trends of the top tenants, read with SEARCH and Metrics Insights queries over `namespace` and
 * the `service` dimension.
 */
export function usageWidgets(namespace: string, service: string): IWidget[][] {
  // A SEARCH reads any time range CloudWatch keeps (15 months), so it gives the month totals. It finds only
  // metrics with data in the last two weeks, and returns at most 500 time series (tenants).
  const schema = /^[A-Za-z0-9_]+$/.test(namespace) ? namespace : `"${namespace}"`;
  const search = (...metricNames: string[]): string => {
    const names = metricNames.map((name) => `MetricName="${name}"`).join(' OR ');
    const term = metricNames.length > 1 ? `(${names})` : names;
    return `SEARCH('{${schema},${SERVICE_DIMENSION},${TENANT_DIMENSION}} ${SERVICE_DIMENSION}="${service}" ${term}', 'Sum')`;
  };
  // A Metrics Insights query sorts and cuts to the top tenants, but reads two weeks at most.
  const insights = (metricName: string): string =>
    `SELECT SUM(${metricName}) FROM SCHEMA("${namespace}", ${SERVICE_DIMENSION}, ${TENANT_DIMENSION}) ` +
    `WHERE ${SERVICE_DIMENSION} = '${service}' GROUP BY ${TENANT_DIMENSION} ORDER BY SUM() DESC LIMIT ${INSIGHTS_TOP}`;
  const byTenant = (...metricNames: string[]): MathExpression =>
    new MathExpression({
      expression: search(...metricNames),
      // The dynamic label applies to each series the search returns.
      label: metricNames.length > 1 ? `\${PROP('Dim.${TENANT_DIMENSION}')} \${PROP('MetricName')}` : `\${PROP('Dim.${TENANT_DIMENSION}')}`,
    });
  // All tenants together, summed over the whole time range: a single number.
  const totalWidget = (metricName: string, title: string, width: number): SingleValueWidget =>
    new SingleValueWidget({
      title,
      metrics: [new MathExpression({ expression: `SUM(${search(metricName)})`, label: `${title}, all tenants` })],
      setPeriodToTimeRange: true,
      fullPrecision: true,
      width,
      height: 3,
    });
  // One row per tenant, one column with its sum over the dashboard's time range. The sum does not depend
  // on the period; one day keeps a month at 31 points per tenant, far under GetMetricData's limits.
  const tenantTable = (title: string, ...metricNames: string[]): TableWidget =>
    new TableWidget({
      title,
      metrics: [byTenant(...metricNames)],
      period: Duration.days(1),
      layout: TableLayout.HORIZONTAL,
      summary: { columns: [TableSummaryColumn.SUM], hideNonSummaryColumns: true, sticky: true },
      fullPrecision: true,
      width: 12,
      height: 8,
    });
  const trend = (title: string, metricName: string, width: number): GraphWidget =>
    new GraphWidget({
      title,
      // An empty label keeps each series' own label, which for GROUP BY is the tenant id.
      left: [new MathExpression({ expression: insights(metricName), label: '', period: Duration.hours(1) })],
      period: Duration.hours(1),
      width,
      height: 6,
    });

  const usage: IWidget[][] = [
    [
      new TextWidget({
        markdown: [
          '# Usage by tenant (finance)',
          'Choose the month in the time range picker: **Custom → Absolute**, from the 1st 00:00 to the 1st of the next month 00:00, with the time zone set to **UTC** ' +
            '(quotas count per calendar month in UTC). The totals and tables sum over the chosen range. ' +
            `They list the tenants that had usage in the **last two weeks** and at most 500 of them; for billing, \`admin usage --month YYYY-MM\` is authoritative. ` +
            `The trend graphs below show the top ${INSIGHTS_TOP} tenants over at most the last two weeks. See docs/metrics.md.`,
        ].join('\n\n'),
        width: 24,
        height: 3,
      }),
    ],
    // One widget per total, each with one SEARCH, so that each is its own small request.
    [
      totalWidget(USAGE_METRIC.recordsWritten, 'Records written', 4),
      totalWidget(USAGE_METRIC.bytesStored, 'Bytes stored (new records)', 4),
      totalWidget(USAGE_METRIC.queriesServed, 'Queries served', 4),
      totalWidget(USAGE_METRIC.recordsDeleted, 'Records deleted', 4),
      totalWidget(USAGE_METRIC.recordQuotaRejections, 'Record quota rejections (507)', 4),
      totalWidget(USAGE_METRIC.queryQuotaRejections, 'Query quota rejections (429)', 4),
    ],
    [
      tenantTable('Records written by tenant', USAGE_METRIC.recordsWritten),
      tenantTable('Queries served by tenant', USAGE_METRIC.queriesServed),
    ],
    [
      tenantTable('Bytes stored by tenant (bytes of the records written in the range)', USAGE_METRIC.bytesStored),
      tenantTable('Quota rejections by tenant', USAGE_METRIC.recordQuotaRejections, USAGE_METRIC.queryQuotaRejections),
    ],
    [
      trend(`Records written, top ${INSIGHTS_TOP} tenants (last two weeks at most)`, USAGE_METRIC.recordsWritten, 8),
      trend(`Queries served, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.queriesServed, 8),
      trend(`Bytes stored, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.bytesStored, 8),
    ],
    [
      trend(`Record quota rejections (507), top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.recordQuotaRejections, 12),
      trend(`Query quota rejections (429), top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.queryQuotaRejections, 12),
    ],
    // Deletes free no quota; finance sees them beside the writes (a forget job counts what it matched).
    [
      tenantTable('Records deleted by tenant (a forget job counts when it starts)', USAGE_METRIC.recordsDeleted),
      trend(`Records deleted, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.recordsDeleted, 12),
    ],
  ];
  return usage;
}
