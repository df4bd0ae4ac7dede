"""The longest prompt of an export's rows in a tokenizer's tokens, counted as verl's RL dataset counts
it when it filters overlong prompts (verl/utils/dataset/rl_dataset.py, maybe_filter_out_long_prompts):
the chat template applied with the generation prompt, the ids normalised by verl's own function.

    python -m mlepipe_verl.lengths TOKENIZER FILE.parquet...

Prints the count. A CPU run's export sets data.max_prompt_length from it: its tiny models' tokenizers are
trained on a few texts, and the GPU export's estimate from characters would make verl drop every row.
"""

import sys


def longest(tokenizer_dir, files):
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer
    from verl.utils.tokenizer.tokenizer import normalize_token_ids

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    most = 0
    for file in files:
        for prompt in pq.read_table(file, columns=["prompt"]).column("prompt").to_pylist():
            ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True)
            most = max(most, len(normalize_token_ids(ids)))
    return most


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    print(longest(sys.argv[1], sys.argv[2:]))
