/**
 * A progress line on stderr for one step of the benchmark: a bar redrawn in place on a terminal, or a line
 * every tenth of the way otherwise (CI logs), and a final line with the step's result.
 */
export function progress(label: string, total: number) {
  const tty = process.stderr.isTTY === true;
  const started = performance.now();
  let done = 0;
  let lastDecile = -1;
  const draw = () => {
    const fraction = total === 0 ? 1 : done / total;
    if (tty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(`\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}`);
    } else if (Math.floor(fraction * 10) > lastDecile) {
      lastDecile = Math.floor(fraction * 10);
      process.stderr.write(`${label}: ${done}/${total}\n`);
    }
  };
  draw();
  return {
    tick(n = 1) {
      done += n;
      if (tty ? done % Math.max(1, Math.floor(total / 200)) === 0 || done === total : true) draw();
    },
    finish(result = '') {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stderr.write(`${tty ? '\r\x1b[K' : ''}${label}: done in ${seconds} s${result ? `, ${result}` : ''}\n`);
    },
  };
}

/** A one-line note on stderr between steps. */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}
