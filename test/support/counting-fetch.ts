/** A fetch that records the status of every answer it passes on: how the SDK tests count requests and retries. */
export function countingFetch() {
  const statuses: number[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  return { statuses, fetch: fetcher };
}
