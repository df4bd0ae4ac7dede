// Durations as the prompts state them ("2 hours", "15 minutes"), rounded to the largest unit that fits.

/** Seconds in words: days, hours, minutes or seconds, with one more unit where the first is a small count. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const units: Array<[string, number]> = [
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  const word = (n: number, u: string) => `${n} ${u}${n === 1 ? '' : 's'}`;
  for (let i = 0; i < units.length; i++) {
    const [name, size] = units[i];
    if (s < size && i < units.length - 1) continue;
    const n = Math.floor(s / size);
    const rest = s - n * size;
    const next = units[i + 1];
    if (next && n < 3 && rest >= next[1]) return `${word(n, name)} ${word(Math.floor(rest / next[1]), next[0])}`;
    return word(n, name);
  }
  return '0 seconds';
}
