"""The api checks of one run remember the answers about hosts and header pairs its files
repeat (``url_rules.RepeatedAnswers``): a run over many files finds, file by file, exactly
what checking each file on its own finds, however the good and the bad repeat."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks.api import check_api, check_api_documents
from compiler.checks.url_rules import RepeatedAnswers
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

_HOSTS = ["api.example.com", "API.Example.com", "127.0.0.1", "10.0.0.7", "localhost",
          "169.254.169.254", "metadata.google.internal", "0x7f000001", "x.localhost",
          "1.2.3.4.5", "docs.example.org"]
_HEADERS = [("Accept", "application/json"), ("Authorization", "Bearer ${TOKEN}"),
            ("Authorization", "Bearer sk-abcdefghijklmnopqrstuvwx"), ("Host", "evil"),
            ("X-Api-Key", "literal-key-value"), ("X-Trace", "${BAD-NAME}"),
            ("Accept", "text/plain"), ("X-Team", "payments")]
_POLICIES = [EgressPolicy(), EgressPolicy(False, parse_allowed_networks(["10.0.0.0/8"]))]


def _document(index: int, host: str, headers: list[tuple[str, str]]) -> SourceDocument:
    lines = "".join(f'    "{name}": "{value}"\n' for name, value in headers)
    text = (f"code: tool_{index}\ntype: api\noptions:\n  name: tool_{index}\n"
            f"  description: d\n  url: https://{host}/v1\n"
            + (f"  headers:\n{lines}" if headers else ""))
    documents, problems = parse_source(f"t/{index}.yaml", text.encode(), {})
    assert not problems
    return documents[0]


_FILES = st.lists(st.tuples(st.sampled_from(_HOSTS),
                            st.lists(st.sampled_from(_HEADERS), max_size=3, unique_by=lambda
                                     pair: pair[0])),
                  min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(_FILES, st.sampled_from(_POLICIES), st.booleans())
def test_a_run_finds_what_each_file_alone_finds(files: list[tuple[str, list[tuple[str, str]]]],
                                                 policy: EgressPolicy, allow: bool) -> None:
    documents = [_document(index, host, headers) for index, (host, headers)
                 in enumerate(files)]
    alone = [finding for document in documents
             for finding in check_api(document, allow, policy)]
    found = check_api_documents(documents, allow, policy)
    # One check at a time over all documents: a document's findings come in check_api's
    # order, the run's in another (a run's diagnostics are settled: sorted).
    assert sorted(found) == sorted(alone)
    for document in documents:
        assert [d for d in found if d.path == document.path] == \
            [d for d in alone if d.path == document.path]


def test_the_tree_repeats_are_remembered_and_refusals_are_not() -> None:
    documents = [_document(index, "api.example.com", [_HEADERS[1], _HEADERS[4]])
                 for index in range(3)]
    found = check_api_documents(documents, False, EgressPolicy())
    # The literal credential is found in every file, not only the first.
    assert [d.code for d in found].count("literal-credential") == 3
    answers = RepeatedAnswers(())
    assert answers.host_refusal("127.0.0.1", ()) is not None
    assert answers.host_refusal("api.example.com", ()) is None
    assert set(answers.hosts) == {"127.0.0.1", "api.example.com"}
    long_host = "a" * 300
    answers.host_refusal(long_host, ())
    assert long_host not in answers.hosts  # beyond a DNS name's length: judged each time
    answers.remember_clean_header("X", "y" * 2000)
    assert not answers.clean_headers  # too long to keep
