/**
 * A record's version as HTTP sees it (decisions.md, "Updating a record"): `GET` sends `ETag: "<version>"`, and
 * a `PATCH` with `If-Match` applies only to one of the versions it names (RFC 9110, section 13.1.1: strong
 * comparison, so a weak tag never matches).
 */

/** The ETag of a record's version: the version as a quoted string. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * The versions an `If-Match` header accepts: undefined when there is no header or it is `*` (any version
 * will do); otherwise the versions its strong entity tags name, which may be none (a weak tag, or text that
 * is not one of this service's tags), so that no record matches and the update answers 412.
 */
export function ifMatchVersions(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const tag of header.split(',')) {
    const match = /^"([1-9][0-9]{0,15})"$/.exec(tag.trim());
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}
