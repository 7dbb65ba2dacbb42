"""A bar drawn with no description right after a statement announcing work on data (reading instances, fitting a
vocabulary) counts that work's items, not training steps; a bar after a statement about training stays a record.
Lines quoted from public issue threads (cited beside each)."""

from __future__ import annotations

from tests.support.formats_support import read_lines

# allennlp/allennlp issue 1599 (a run of 2018-10-24): the dataset reader's and the vocabulary's bars
_ALLENNLP = [
    "0it [00:00, ?it/s]2018-10-24 12:30:15,709 - INFO - allennlp.data.dataset_readers.stanford_sentiment_tree_bank"
    " - Reading instances from lines in file at: /anaconda3/lib/python3.6/site-packages/allennlp/tests/fixtures/"
    "data/sst.txt",
    "21it [00:00, 14987.30it/s]",
    "2018-10-24 12:30:15,711 - INFO - allennlp.data.vocabulary - Fitting token dictionary from dataset.",
    "100%|██████████| 21/21 [00:00<00:00, 198379.24it/s]",
]


def test_bars_after_a_statement_of_data_work_are_no_records() -> None:
    # 21 instances read at 14987.30 items/s and a 21-item vocabulary pass: neither is a training step
    parsed = read_lines(*_ALLENNLP)
    assert parsed.steps.height == 0
    assert parsed.rejects.height == 0


def test_a_bar_after_a_statement_about_training_stays_a_record() -> None:
    # near-miss: GluonTS on SageMaker (awslabs/gluonts issue 891, 2020-06-24): the epoch's learning-rate line, then its
    # bar (CloudWatch's '#015' for the carriage returns); the line before names no data work, so the bar's finished
    # drawing is the epoch's record: 100 batches, 2.46 it/s
    parsed = read_lines(
        "INFO:root:Epoch[98] Learning rate is 5e-05",
        "#015  0%|          | 0/100 [00:00<?, ?it/s]#015 24%|██▍       | 24/100 [00:10<00:32,  2.34it/s, "
        "avg_epoch_loss=1.74]#015 50%|█████     | 50/100 [00:20<00:20,  2.40it/s, avg_epoch_loss=1.74]"
        "#015 76%|███████▌  | 76/100 [00:31<00:09,  2.40it/s, avg_epoch_loss=1.73]"
        "#015100%|██████████| 100/100 [00:40<00:00,  2.46it/s, avg_epoch_loss=1.72]",
    )
    got = parsed.steps.sort("step")
    assert got.get_column("step").to_list()[-1] == 100
    assert got.get_column("local_steps_per_s").to_list()[-1] == 2.46
