"""What test/verl/sft.test.ts runs in .venv/verl on an SFT export:

sft_driver.py model DIR          a tiny random Qwen3 and a tokenizer trained under Qwen3's real template
sft_driver.py dataset EXPORT     the export's rows through the dataset verl's SFT trainer builds from
                                 its overrides (verl.trainer.sft_trainer.create_sft_dataset), and
                                 through verl's own MultiTurnSFTDataset: per row, the decoded input
                                 ids and the decoded runs of loss-mask 1, as one JSON line
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # gpu/verl: mlepipe_verl


def model(out):
    from transformers import AutoModelForCausalLM, Qwen3Config

    from harness import train_tokenizer

    tok = train_tokenizer("qwen3")
    tok.save_pretrained(out)
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        head_dim=16,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
    )
    AutoModelForCausalLM.from_config(config).save_pretrained(out)


def runs(tok, ids, mask):
    """The decoded runs of consecutive mask-1 tokens."""
    out, cur = [], []
    for i, m in zip(ids, mask):
        if m:
            cur.append(i)
        elif cur:
            out.append(tok.decode(cur)), cur.clear()
    if cur:
        out.append(tok.decode(cur))
    return out


def dataset(export):
    import yaml

    from verl.trainer.sft_trainer import create_sft_dataset
    from verl.utils import hf_tokenizer
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    from mlepipe_verl.config import compose

    os.chdir(export)
    with open("trainer_overrides.yaml", encoding="utf-8") as f:
        overrides = yaml.safe_load(f)["overrides"]
    config = compose(overrides, "sft_trainer_engine")
    tok = hf_tokenizer(config.model.tokenizer_path or config.model.path)
    ours = create_sft_dataset(config.data.train_files, config.data, tok, None)
    verls = MultiTurnSFTDataset(parquet_files=config.data.train_files, tokenizer=tok, config=config.data)
    rows = []
    for k in range(len(ours)):
        a, b = ours[k], verls[k]
        rows.append(
            {
                "cls": type(ours).__name__,
                "decoded": tok.decode(a["input_ids"].tolist()),
                "trained": runs(tok, a["input_ids"].tolist(), a["loss_mask"].tolist()),
                "verl_trained": runs(tok, b["input_ids"].tolist(), b["loss_mask"].tolist()),
                "whole": tok.apply_chat_template(verls.messages[k], tokenize=False),
            }
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    {"model": model, "dataset": dataset}[sys.argv[1]](*sys.argv[2:])
