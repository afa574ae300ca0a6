"""The word-overlap baseline's stopwords: scikit-learn's list, read without importing scikit-learn."""

import subprocess
import sys

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from sgi_core.scores.baselines import _stop_words


def test_the_list_read_from_the_source_is_scikit_learns():
    assert _stop_words() == ENGLISH_STOP_WORDS
    assert len(_stop_words()) == 318


def test_word_overlap_does_not_import_scikit_learn():
    code = ("import sys; from sgi_core.scores.baselines import lexical_groundedness; "
            "print(lexical_groundedness(['the capital is Paris'], ['Paris is a capital'], warn=False)[0], "
            "'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1.0", "False"]
