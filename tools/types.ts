// What a diagnostic tool is to the host: a name the agent calls, the module its
// Python lives in, the arguments it takes (a JSON Schema) and what it answers.

export const DOMAINS = ['shared', 'tabular', 'time-series', 'nlp', 'vision', 'graph'] as const;
export type Domain = (typeof DOMAINS)[number];

/**
 * Other names a module goes by: the suite's task domains (`cv`, `time_series`, as task.json and the
 * coverage columns write them) and the modalities of seeds (`image`, `text`).
 */
export const DOMAIN_ALIASES: Readonly<Record<string, Domain>> = {
  time_series: 'time-series',
  timeseries: 'time-series',
  cv: 'vision',
  image: 'vision',
  text: 'nlp',
};

/** The subset of JSON Schema tool arguments use: flat objects of scalars and string lists. */
export interface ArgSchema {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  description: string;
  items?: { type: 'string' | 'integer' };
  enum?: readonly string[];
  minimum?: number;
  default?: unknown;
}

export interface ToolSpec {
  name: string;
  domain: Domain;
  /** One line: what the answer holds. */
  returns: string;
  args: {
    type: 'object';
    properties: Record<string, ArgSchema>;
    required: string[];
    additionalProperties: false;
  };
}

/** What a call gives back: `text` for the agent to read, `evidence` for whatever wants the numbers. */
export interface ToolAnswer {
  tool: string;
  ok: boolean;
  text: string;
  evidence: Record<string, unknown>;
  error?: string;
  timedOut?: boolean;
  durationMs: number;
}
