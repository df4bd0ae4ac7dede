export function bundle(opts?: { outdir?: string; splitting?: boolean }): Promise<string>;
