// What every group of commands shares when it registers its commands: the repeatable -S option and the
// wrapper that hands a command's exit code back to the entry.
import { Option } from 'commander';

/** The options a group's commands are registered with. */
export interface Registrar {
  /** Wraps a command so that its exit code reaches the entry, which returns it from `main`. */
  act<A extends unknown[]>(fn: (...a: A) => Promise<number>): (...a: A) => Promise<void>;
}

/** Adds each repetition of a repeatable option to the list. */
export const collect = (v: string, acc: string[]) => [...acc, v];

/** `-S key=value`, repeatable; `what` says which keys this command's overrides reach. */
export const setOption = (what = 'any key of the experiment, or hosts.NAME.KEY of the settings') =>
  new Option('-S, --set <key=value>', `override ${what} (value parsed as YAML); repeatable`)
    .argParser(collect)
    .default([]);
