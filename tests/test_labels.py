"""Topic labels (pipeline.topics.labels): readable phrases from c-TF-IDF terms, unique across topics."""

from __future__ import annotations

from pipeline.topics.labels import OUTLIER_LABEL, DeferredLabels, make_labels, readable_term, readable_terms

DOCUMENTS = [
    "Large language models (LLMs) excel at in-context learning. We study in-context learning in LLMs.",
    "We fine-tune large language models with LoRA; in-context learning emerges with scale.",
    "In-context learning of large language models is brittle; LoRA fine-tuning helps LLMs.",
    "Time series anomaly detection with large language models.",
    "Time series anomaly detection benchmarks and in-context learning.",
    "Robust time series anomaly detection.",
]


def test_fragments_are_completed_to_the_phrase_the_papers_write():
    assert readable_term("large language", DOCUMENTS) == "large language models"
    assert readable_term("context learning", DOCUMENTS) == "in-context learning"


def test_acronyms_keep_their_spelling_and_common_words_are_lower_case():
    assert readable_term("llms", DOCUMENTS) == "LLMs"
    assert readable_term("lora", DOCUMENTS) == "LoRA"
    assert readable_term("robust", DOCUMENTS) == "robust"  # written "Robust" only at the start of a sentence


def test_terms_the_papers_never_write_and_long_fragments_are_dropped():
    # "reasoning large" comes from "reasoning in large ..." once stop words are removed: never written
    assert readable_term("learning large", DOCUMENTS) is None
    # "series anomaly detection" always follows "time": the whole phrase has four words, too long for a label
    assert readable_term("series anomaly detection", DOCUMENTS) is None
    # terms without Latin letters (CJK) are kept as they are
    assert readable_term("学 习", ["机器学习"]) == "学习"


def test_readable_terms_fall_back_to_the_terms_when_none_is_written():
    assert readable_terms(["large language", "llms", "large language models"], DOCUMENTS) == [
        "large language models",
        "LLMs",
    ]
    assert readable_terms(["qqq zzz"], DOCUMENTS) == ["qqq zzz"]


def test_labels_use_the_phrases_and_stay_unique():
    topics = {-1: ["the"], 0: ["large language", "llms", "lora"], 1: ["large language", "llms", "lora"], 2: []}
    labels = make_labels(topics, documents={0: DOCUMENTS, 1: DOCUMENTS, 2: []})
    assert labels[-1] == OUTLIER_LABEL
    assert labels[0] == "large language models, LLMs, LoRA"
    assert len(set(labels.values())) == len(labels)
    assert labels[2] == "Topic 2 (no keywords)"


def test_phrases_never_run_across_two_documents():
    documents = ["We study large language", "models of the sea. Large language models drift.", "Large language priors."]
    assert readable_term("large language", documents) == "large language"  # "models" follows only 1 of 3
    assert readable_term("language models", ["large language", "models"]) is None


def test_cjk_particles_are_never_labels_and_cjk_terms_are_written_joined():
    from pipeline.topics.labels import is_function_term

    topics = {0: ["た", "の", "を", "学 習", "深 層"], 1: ["的", "了", "图 神", "神 经"]}
    labels = make_labels(topics, documents={0: ["深層学習を用いた"], 1: ["图神经网络的"]})
    assert labels[0] == "学習, 深層" and labels[1] == "图神, 神经"
    assert is_function_term("の を") and is_function_term("of the") and not is_function_term("学 習")


def test_labels_differing_only_in_case_or_spacing_are_made_distinct():
    labels = make_labels({0: ["Graph", "nodes"], 1: ["graph", "nodes"]}, n_terms=2)
    assert labels[0].lower() == "graph, nodes" and labels[1] != labels[0] and labels[1].lower() != labels[0].lower()


def test_cjk_function_characters_are_stop_words_of_the_vectorizer():
    from pipeline.text.vocabulary import make_vectorizer

    vocabulary = set(
        make_vectorizer(
            ["深層学習を用いた画像の分類を行った。", "深層学習による音声の認識を行った。"], min_df=1
        ).get_feature_names_out()
    )
    assert not vocabulary & {"の", "を", "た", "っ"} and {"学", "学 習"} <= vocabulary


def test_deferred_labels_are_made_only_when_a_topic_other_than_the_outliers_is_looked_up():
    """pipeline.topics.labels.DeferredLabels: the outliers' label needs nothing made; any other topic's look-up makes
    every label, the same as make_labels; iteration in topic order."""
    terms = {2: ["graph", "node"], -1: ["the"], 0: ["policy", "reward"], 1: ["graph", "node"]}
    documents = {0: ["Policy gradients maximise reward."], 1: ["Graph nodes."], 2: ["Graph node embeddings."]}
    asked = []
    deferred = DeferredLabels(terms, lambda: asked.append(1) or documents)
    assert deferred[-1] == OUTLIER_LABEL and not deferred.made and not asked
    assert list(deferred) == [-1, 0, 1, 2] and len(deferred) == 4 and not deferred.made
    expected = make_labels(terms, documents=documents)
    assert {topic: deferred[topic] for topic in deferred} == expected and asked == [1]
    assert expected[1] != expected[2]  # unique across topics, as make_labels makes them
