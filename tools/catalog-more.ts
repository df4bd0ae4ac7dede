// The NLP, vision and graph modules' tools.
import { def, int, list, num, seed, str } from './define.js';
import type { ArgSchema, ToolSpec } from './types.js';

const bool = (description: string, dflt: boolean): ArgSchema => ({ type: 'boolean', description, default: dflt });
const texts = str('CSV, JSONL, JSON or TXT file (one text a line) relative to the workspace');
const field = str('the text field (default: the longest text column)');
const nlp = (n: string, r: string, p: Record<string, ArgSchema> = {}, req: string[] = ['path']) =>
  def('nlp', n, r, { path: texts, ...p }, req);

const images = str(
  'a folder of images (class subfolders give labels) or a table with an image-file column, relative to the workspace',
);
const imageColumn = str(
  "the table's column of image files (default: the column whose values end in an image extension)",
);
const vision = (n: string, r: string, p: Record<string, ArgSchema>, req: string[] = ['path']) =>
  def('vision', n, r, p, req);

const edges = str('edge list: two columns of node ids (CSV, TXT, or .npy, also as a 2×E edge_index)');
const nodes = int('node count (default: largest id + 1)');
const labels = str('node labels: .npy, TXT, or a table (its last column unless label_column)');
const labelColumn = str('the label column of a labels table');
const index = (which: string) => str(`${which} node indices (.npy or one per line)`);
const graph = (n: string, r: string, p: Record<string, ArgSchema>, req: string[]) => def('graph', n, r, p, req);

export const MORE_TOOLS: readonly ToolSpec[] = [
  nlp('repetition_detector', 'exact duplicate texts and near-duplicates by word n-gram Jaccard', {
    field,
    n: int('n-gram length', 3),
    threshold: num('Jaccard at or above which two texts are near-duplicates', 0.8),
    limit: int('texts compared', 3000),
  }),
  nlp('toxicity_noise_filter', 'blank, too short, markup, symbol noise, control characters and link-heavy texts', {
    field,
    min_chars: int('shortest acceptable text', 3),
    symbol_ratio: num('share of symbols that counts as noise', 0.3),
  }),
  nlp(
    'language_consistency_checker',
    'language proportions (script and stopword heuristics) and texts that mix scripts',
    { field },
  ),
  nlp(
    'instruction_response_coherence',
    'TF-IDF similarity of each instruction and its response; pairs with little overlap',
    {
      instruction_field: str('the instruction field'),
      response_field: str('the response field'),
      threshold: num('similarity below which a pair is listed', 0.05),
    },
    ['path', 'instruction_field', 'response_field'],
  ),
  nlp(
    'token_length_distribution',
    'length statistics in tokens of a tokenizer file (words when none can be used) and the share beyond a maximum',
    {
      field,
      tokenizer: str('tokenizer.json in the workspace (needs the tokenizers library)'),
      max_length: int('length beyond which a text is truncated'),
    },
  ),
  nlp(
    'vocabulary_coverage_checker',
    'share of words not in a vocabulary file or a tokenizer JSON, with the most frequent missing ones',
    {
      vocab: str('vocabulary file (one entry a line) or tokenizer JSON'),
      field,
      lowercase: bool('compare lower-cased', true),
    },
    ['path', 'vocab'],
  ),
  nlp(
    'prompt_template_validator',
    'per-marker presence and the share of records with every marker in order',
    { markers: list('markers expected in every record, in order'), field },
    ['path', 'markers'],
  ),
  nlp(
    'response_quality_scorer',
    'heuristic per-response score from length, n-gram repetition, repeated lines and cut-off endings',
    { field, min_words: int('fewest words', 3), max_words: int('most words', 1000) },
  ),
  nlp('topic_distribution_analyzer', 'TF-IDF k-means clusters: sizes, top terms, and how concentrated the topics are', {
    field,
    k: int('clusters', 5),
    limit: int('texts used', 5000),
    seed,
  }),
  nlp(
    'difficulty_distribution_estimator',
    'length, word length, digits and reading ease per text, with easy/medium/hard tertiles of a combined proxy',
    { field },
  ),
  nlp(
    'data_source_mixing_analyzer',
    'count and share of each source and whether one dominates',
    { source_field: str("the field naming each record's source") },
    ['path', 'source_field'],
  ),
  nlp(
    'perplexity_outlier_detector',
    'perplexity statistics and high/low outliers (a reference LM needs transformers; otherwise a unigram model of the corpus)',
    {
      field,
      model: str('reference model folder'),
      threshold: num('|z| of log-perplexity for an outlier', 3),
    },
  ),
  nlp(
    'reward_distribution_analyzer',
    'reward statistics, distinct values, and the share of groups whose samples all score the same',
    {
      field: { ...str('the reward field'), default: 'reward' },
      group_field: str('field grouping samples of one prompt'),
    },
  ),
  nlp(
    'kl_reference_divergence_estimator',
    'policy-reference KL estimates (k1, k3) from supplied log-probabilities, and whether to raise the penalty',
    {
      logprob_field: str("the policy's log-probabilities (a number or a list per record)"),
      ref_logprob_field: str("the reference's log-probabilities"),
      target: num('KL per token above which to act', 0.1),
    },
    ['path', 'logprob_field', 'ref_logprob_field'],
  ),
  nlp(
    'generation_diversity_checker',
    'distinct-1/2, repeated outputs and signs of mode collapse, per group when given',
    { field, group_field: str('field grouping samples of one prompt') },
  ),
  nlp(
    'safety_content_detector',
    'texts matching sensitive keywords or personal-data patterns, with the terms matched',
    { field, keywords: list('extra keywords to flag') },
  ),
  nlp('refusal_pattern_analyzer', 'share of responses with refusal phrases and whether it exceeds the expected rate', {
    field,
    expected_rate: num('refusal share above which to warn', 0.05),
  }),

  vision('class_balance_check', 'image counts per class and the imbalance ratio', {
    path: images,
    label_column: str('label column when PATH is a table'),
    image_column: imageColumn,
  }),
  vision(
    'image_normalization_stats',
    'pixel ranges and per-channel means and standard deviations, with normalization constants',
    { path: images, image_column: imageColumn, sample: int('images read', 200) },
  ),
  vision('image_shape_consistency', 'counts of each size and mode, and the images that differ from the most common', {
    path: images,
    image_column: imageColumn,
  }),
  vision('duplicate_image_detector', 'exact duplicates (file hash) and near-duplicate pairs (average hash)', {
    path: images,
    image_column: imageColumn,
    max_distance: int('largest hash distance for a near-duplicate', 4),
    limit: int('images compared', 3000),
  }),
  vision('corrupt_image_detector', 'images that cannot be opened or decoded', {
    path: images,
    image_column: imageColumn,
  }),
  vision(
    'augmentation_auditor',
    'transforms a training script names, and common augmentations it lacks (static scan)',
    { path: str('training script') },
  ),
  vision(
    'train_test_distribution_shift',
    'channel statistics of two image sets and a test on per-image brightness',
    { train: images, test: images, image_column: imageColumn, sample: int('images read from each', 200) },
    ['train', 'test'],
  ),
  vision(
    'per_class_accuracy_breakdown',
    'accuracy per class and the most frequent confusions, from predictions and labels joined on an id',
    {
      predictions: str('predictions table'),
      labels: str('labels table'),
      id_column: { ...str('the id column'), default: 'id' },
      prediction_column: str('the predictions column (default: the last)'),
      label_column: str('the labels column (default: the last)'),
    },
    ['predictions', 'labels'],
  ),

  graph(
    'graph_size_summary',
    'node and edge counts, density, feature dimension and split sizes',
    {
      edges,
      features: str('node features (.npy or a table)'),
      num_nodes: nodes,
      train_idx: index('training'),
      val_idx: index('validation'),
      test_idx: index('test'),
    },
    ['edges'],
  ),
  graph(
    'degree_distribution',
    'degree statistics, isolated nodes and high-degree hubs',
    { edges, num_nodes: nodes, hub_quantile: num('degree quantile above which a node may be a hub', 0.99) },
    ['edges'],
  ),
  graph(
    'node_label_balance',
    'class counts on the training nodes when given, otherwise on all labels',
    { labels, train_idx: index('training'), label_column: labelColumn },
    ['labels'],
  ),
  graph(
    'node_feature_health',
    'feature scales, non-finite values, all-zero rows and constant columns',
    { features: str('node features (.npy or a table)') },
    ['features'],
  ),
  graph(
    'connectivity_components',
    'connected components and the share of nodes in the largest',
    { edges, num_nodes: nodes },
    ['edges'],
  ),
  graph(
    'self_loop_duplicate_edge_detector',
    'self-loops, duplicate edges and how many edges have their reverse',
    { edges },
    ['edges'],
  ),
  graph(
    'homophily_estimator',
    'share of edges joining same-label nodes, against the share random edges would give',
    { edges, labels, label_column: labelColumn },
    ['edges', 'labels'],
  ),
  graph(
    'split_integrity_check',
    'split sizes, overlaps, duplicates, out-of-range indices and classes missing from a split',
    {
      train_idx: index('training'),
      val_idx: index('validation'),
      test_idx: index('test'),
      labels,
      num_nodes: nodes,
      label_column: labelColumn,
    },
    ['train_idx'],
  ),
];
