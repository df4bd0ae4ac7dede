"""From a batch's turns to the exact sequences the update trains on."""

import pytest
from serving import batch, trajectory

from mlepipe_worker.batch import BatchError, batch_sequences
from mlepipe_worker.protocol import Batch

IDENT = {"tokenizer_sha256": "t", "chat_template_sha256": "c"}


def turn(prompt, reply, lp=-0.5, mask=None):
    t = {"prompt_ids": prompt, "token_ids": reply, "logprobs": [lp] * len(reply)}
    if mask is not None:
        t["loss_mask"] = mask
    return t


def sequences(*trajs, vocab=100):
    return batch_sequences(Batch.model_validate(batch(list(trajs), IDENT)), vocab)


def test_a_turn_that_extends_the_last_context_joins_its_sequence_with_the_observation_masked():
    first = turn([1, 2, 3], [10, 11], lp=-1.0)
    # The next context: the last one, the reply, then the observation 20 21 and the next prompt's tokens.
    second = turn([1, 2, 3, 10, 11, 20, 21], [12, 13, 14], lp=-2.0, mask=[1, 1, 0])
    (seq,) = sequences(trajectory(0, 0.5, [first, second]))
    assert seq.input_ids == [1, 2, 3, 10, 11, 20, 21, 12, 13, 14]
    assert seq.loss_mask == [0, 0, 0, 1, 1, 0, 0, 1, 1, 0]
    assert seq.old_logprobs == [0, 0, 0, -1.0, -1.0, 0, 0, -2.0, -2.0, -2.0]
    assert seq.advantages == 0.5


def test_turn_level_credit_puts_each_turns_advantage_on_its_own_tokens():
    first = turn([1, 2, 3], [10, 11])
    second = turn([1, 2, 3, 10, 11, 20], [12, 13])
    t = trajectory(0, 0.0, [first, second])
    t["turn_advantages"] = [0.7, -0.2]
    (seq,) = batch_sequences(Batch.model_validate(batch([t], IDENT, advantage_level="turn")), 100)
    assert seq.advantages == [0, 0, 0, 0.7, 0.7, 0, -0.2, -0.2]
    # The default stays trajectory-level: one number for every token.
    (plain,) = sequences(t)
    assert plain.advantages == 0.0
    t["turn_advantages"] = [0.7]
    with pytest.raises(BatchError) as e:
        batch_sequences(Batch.model_validate(batch([t], IDENT, advantage_level="turn")), 100)
    assert e.value.loc == "trajectories.0.turn_advantages"


def test_a_turn_whose_context_was_rewritten_starts_a_sequence_of_its_own():
    first = turn([1, 2, 3], [10, 11])
    second = turn([1, 2, 4, 10, 11], [12])  # token 3 became 4: the history was not kept verbatim
    a, b = sequences(trajectory(0, 1.0, [first, second]))
    assert a.input_ids == [1, 2, 3, 10, 11] and a.loss_mask == [0, 0, 0, 1, 1]
    assert b.input_ids == [1, 2, 4, 10, 11, 12] and b.loss_mask == [0, 0, 0, 0, 0, 1]


def test_masked_trajectories_bring_no_sequence_and_need_no_tokens():
    kept = trajectory(1, -1.0, [turn([5], [6])])
    seqs = sequences(trajectory(0, 0.0, None, masked=True), kept)
    assert [s.input_ids for s in seqs] == [[5, 6]]


def test_a_turn_count_other_than_the_conversations_replies_is_refused():
    t = trajectory(0, 1.0, [turn([1], [2])])
    t["messages"] = [{"role": "user", "content": "q", "loss_mask": 0}, {"role": "assistant", "content": "a", "loss_mask": 1},
                     {"role": "assistant", "content": "b", "loss_mask": 1}]  # fmt: skip
    with pytest.raises(BatchError) as err:
        sequences(t)
    assert err.value.loc == "trajectories.0.turns" and "2 assistant replies" in err.value.message


@pytest.mark.parametrize(
    "bad, loc",
    [
        (turn([1], [2, 3], mask=[1]), "trajectories.0.turns.0.loss_mask"),
        (turn([1], [2, 100]), "trajectories.0.turns.0.token_ids.1"),
        (turn([-1], [2]), "trajectories.0.turns.0.prompt_ids.0"),
        (turn([1], [], lp=0.0), "trajectories.0.turns.0.token_ids"),
        (turn([1], [2], lp=0.7), "trajectories.0.turns.0.logprobs.0"),
    ],
)
def test_inconsistent_tokens_are_refused_naming_the_field(bad, loc):
    with pytest.raises(BatchError) as err:
        sequences(trajectory(0, 1.0, [bad]))
    assert err.value.loc == loc
