import { existsSync } from 'node:fs';

/**
 * The interpreter to hand to stages without probing it: the configured one,
 * else Debian's /usr/bin/python3 (where apt puts numpy/pandas/sklearn; a
 * `python3` earlier on PATH may be another interpreter without them).
 * `mlepipe doctor` does the thorough check.
 */
export function defaultPython(configured?: string): string {
  if (configured) return configured;
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}
