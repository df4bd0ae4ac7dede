// Filled in by esbuild from package.json; the fallback serves tests run from source.
declare const __MLEPIPE_VERSION__: string | undefined;
export const VERSION: string = typeof __MLEPIPE_VERSION__ === 'string' ? __MLEPIPE_VERSION__ : '0.1.0-dev';
