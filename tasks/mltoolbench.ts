// The MLToolBench-style suite's instance list (tasks/py/mltoolbench/instances.tsv,
// shared with the Python generator) and the selection a stage makes from it.
import { assetText } from '../core/assets.js';
import { sklearnStackWith } from '../sandbox/warm/modules.js';

export type SuiteSplit = 'train' | 'id' | 'ood';

export interface SuiteInstance {
  id: string;
  template: string;
  /** healthy, or the name of the fault the starter carries (never shown to an agent). */
  config: string;
  seed: number;
  split: SuiteSplit;
  domain: string;
}

export const SUITE_DOMAINS = ['cv', 'nlp', 'tabular', 'time_series', 'graph'] as const;

export function suiteInstances(): SuiteInstance[] {
  const lines = assetText('tasks/py/mltoolbench/instances.tsv')
    .split('\n')
    .slice(1)
    .filter((l) => l.trim());
  return lines.map((line) => {
    const [suffix, template, config, seed] = line.split('\t');
    const parts = suffix.split('-');
    return {
      id: `mltb-v1-${suffix}`,
      template,
      config,
      seed: Number(seed),
      split: parts[parts.length - 2] as SuiteSplit,
      domain: parts.slice(0, -2).join('-'),
    };
  });
}

export function suiteTemplates(): string[] {
  return [...new Set(suiteInstances().map((i) => i.template))].sort();
}

export interface SuiteSelection {
  split: SuiteSplit | 'all';
  templates?: readonly string[];
  domains?: readonly string[];
  limit?: number;
}

export function selectInstances(sel: SuiteSelection): SuiteInstance[] {
  const picked = suiteInstances().filter(
    (i) =>
      (sel.split === 'all' || i.split === sel.split) &&
      (!sel.templates || sel.templates.includes(i.template)) &&
      (!sel.domains || sel.domains.includes(i.domain)),
  );
  return sel.limit ? picked.slice(0, sel.limit) : picked;
}

/**
 * What the suite's generator and its starter scripts import (tasks/py/mltoolbench): scikit-learn's stack,
 * SciPy's image filters and Pillow, never torch or XGBoost. The stage that builds the suite preloads only
 * these in its warm jails.
 */
export const SUITE_MODULES = sklearnStackWith(
  'sklearn.svm',
  'sklearn.naive_bayes',
  'scipy.ndimage',
  'scipy.stats',
  'PIL.Image',
);
