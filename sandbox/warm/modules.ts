// What warm executors import before they fork steps, kept apart from the
// executor so that code which only names modules (task generation, the
// solution kit's agents) does not load the sandbox to do so.

/** numpy, pandas, SciPy and the scikit-learn modules models are fitted with. */
const SKLEARN_STACK = ['numpy', 'pandas', 'scipy', 'sklearn', 'sklearn.ensemble', 'sklearn.linear_model', 'sklearn.model_selection', 'sklearn.metrics', 'sklearn.preprocessing'];

/**
 * What the agent environment offers (python/agent.in), imported once per jail
 * so that a step pays a fork, not an import. An interpreter without some of
 * them (Debian's has no LightGBM, XGBoost or torch) skips those; `sandbox.preload`
 * in the settings replaces the list.
 */
export const DEFAULT_WARM_MODULES = [...SKLEARN_STACK, 'lightgbm', 'xgboost', 'torch'];

/**
 * What a stage whose steps run known code preloads instead: the scikit-learn stack and `more`, without
 * what that code never imports (torch, XGBoost: about half of a jail's start-up).
 */
export const sklearnStackWith = (...more: string[]): readonly string[] => [...SKLEARN_STACK, ...more];
