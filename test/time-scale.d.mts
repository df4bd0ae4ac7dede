export function timeScale(env?: Record<string, string | undefined>): number;
