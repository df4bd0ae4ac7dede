// What warm executors import before they fork steps, kept apart from the
// executor so that code which only names modules (task generation, the
// solution kit's agents) does not load the sandbox to do so.

/** numpy, pandas, SciPy and the scikit-learn modules models are fitted with. */
const SKLEARN_STACK = [
  'numpy',
  'pandas',
  'scipy',
  'sklearn',
  'sklearn.ensemble',
  'sklearn.linear_model',
  'sklearn.model_selection',
  'sklearn.metrics',
  'sklearn.preprocessing',
];

/**
 * What the agent environment offers (python/agent.in) and most steps use, imported once per jail so that
 * a step pays a fork, not an import. An interpreter without some of them (Debian's has no LightGBM)
 * skips those; `sandbox.preload` in the settings replaces the list.
 */
export const DEFAULT_WARM_MODULES = [...SKLEARN_STACK, 'lightgbm'];

/**
 * The rest of the agent environment's heavy stack, which a jail imports only once one of its steps has:
 * torch alone cost a jail about as much start-up as the whole scikit-learn stack (1.44 against 0.86
 * CPU-s a jail), and model-written steps that never import it are the common case. The step that first
 * imports one pays for it; the jail's later steps find it loaded.
 */
export const ON_FIRST_USE = ['xgboost', 'torch'];

/** What a jail preloading `modules` imports once a step has: ON_FIRST_USE less what it preloads. */
export const onFirstUse = (modules: readonly string[]): string[] => ON_FIRST_USE.filter((m) => !modules.includes(m));

/**
 * What a stage whose steps run known code preloads instead: the scikit-learn stack and `more`, without
 * what that code never imports (torch, XGBoost: about half of a jail's start-up).
 */
export const sklearnStackWith = (...more: string[]): readonly string[] => [...SKLEARN_STACK, ...more];
