"""A generate call that fails answers every request of its batch with the failure, on the event loop, after the
except clause that caught it has ended (Python unbinds the `as` name there, so the answer must carry its own)."""

import asyncio
from types import SimpleNamespace

from mlepipe_worker.chatqueue import ChatQueue, Entry


class FailingWorker:
    def chat_batch(self, reqs, deliver, cancelled):
        raise RuntimeError("generate ran out of memory")


def test_a_failed_batch_answers_each_request_with_the_error():
    loop = asyncio.new_event_loop()
    loop_errors: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))
    try:
        queue = ChatQueue(FailingWorker())
        entries = [Entry(SimpleNamespace(n=1), f"r{i}", queue.epoch, loop.create_future()) for i in range(2)]
        queue._pending.extend(entries)
        queue._run(queue.epoch, loop)
        # The answers were scheduled with call_soon_threadsafe: one turn of the loop delivers them.
        loop.run_until_complete(asyncio.sleep(0))
        assert loop_errors == []
        for e in entries:
            assert e.future.done()
            err = e.future.exception()
            assert isinstance(err, RuntimeError) and str(err) == "generate ran out of memory"
    finally:
        loop.close()
