// Module resolution hook: `uvu` means ./index.mjs, except for ./index.mjs itself.
const WRAPPER = new URL('./index.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'uvu' && context.parentURL !== WRAPPER) return { url: WRAPPER, shortCircuit: true };
  return next(specifier, context);
}
