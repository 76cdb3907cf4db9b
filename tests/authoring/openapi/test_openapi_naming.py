"""Codes: snake_case, within 64 characters, suffixes that never depend on order or selection."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compiler.authoring.openapi.naming import (
    OperationKey,
    assign_codes,
    setting_name,
    snake_case,
)
from tests.authoring.openapi.helpers import document, get, hermetic, imported, messages, write

CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def test_snake_case_of_real_operation_id_styles() -> None:
    assert snake_case("listPetsByOwner") == "list_pets_by_owner"
    assert snake_case("repos/list-for-org") == "repos_list_for_org"
    assert snake_case("GetCustomersCustomer") == "get_customers_customer"
    assert snake_case("listCoreV1NamespacedPod") == "list_core_v1_namespaced_pod"
    assert snake_case("getHTTPResponse") == "get_http_response"
    assert snake_case("Café crème") == "cafe_creme"


def test_collisions_get_method_then_hash_suffixes() -> None:
    keys = [OperationKey("get", "/pets", "pets"), OperationKey("post", "/pets", "pets"),
            OperationKey("get", "/v2/pets", "pets")]
    codes = assign_codes(keys)
    assert codes[keys[1]] == "pets_post"
    assert codes[keys[0]].startswith("pets_") and codes[keys[2]].startswith("pets_")
    assert len(set(codes.values())) == 3
    assert all(CODE.match(code) for code in codes.values())


def test_long_names_fit_64_characters_readably() -> None:
    key = OperationKey("get", "/x", "a" * 30 + "VeryLongOperationIdentifier" * 4)
    code = assign_codes([key])[key]
    assert len(code) <= 64
    assert code.startswith("aaaa") and CODE.match(code)


def test_operations_without_ids_are_named_from_method_and_path() -> None:
    key = OperationKey("delete", "/repos/{owner}/{repo}", None)
    assert assign_codes([key])[key] == "delete_repos_owner_repo"
    numeric = OperationKey("get", "/2fa", "2fa")
    assert assign_codes([numeric])[numeric] == "op_2fa"


operation_keys = st.lists(
    st.builds(OperationKey, st.sampled_from(["get", "post", "put"]),
              st.sampled_from(["/a", "/b", "/a/{id}", "/v2/a"]),
              st.one_of(st.none(), st.sampled_from(["listA", "list_a", "ListA", "x" * 70]))),
    unique_by=lambda key: (key.method, key.path), max_size=12)


@given(operation_keys, st.randoms())
def test_codes_are_unique_valid_and_independent_of_order(keys: list[OperationKey],
                                                         shuffler: object) -> None:
    codes = assign_codes(keys)
    assert len(set(codes.values())) == len(keys)
    assert all(CODE.match(code) for code in codes.values())
    shuffled = list(keys)
    shuffler.shuffle(shuffled)  # type: ignore[attr-defined]
    assert assign_codes(shuffled) == codes


def test_selection_does_not_change_a_code(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("listA"), "post": get("list_a")},
                                     "/b": {"get": get("other")}}))
    everything = imported(spec, tmp_path / "all")
    one = imported(spec, tmp_path / "one", "POST /a")
    assert everything.exit_code == one.exit_code == 0, messages(one)
    assert (tmp_path / "one" / "list_a_post.yaml").read_bytes() != b""
    assert {p.name for p in (tmp_path / "all").iterdir()} == \
        {"list_a_get.yaml", "list_a_post.yaml", "other.yaml"}


def test_setting_names_are_predictable() -> None:
    assert setting_name("Stripe API", "bearerAuth") == "STRIPE_API_BEARER_AUTH"
    assert setting_name("", "X-Api-Key") == "X_API_KEY"
    assert setting_name("3scale", "key") == "API_3SCALE_KEY"


def test_operation_ids_with_control_or_bidi_characters_are_refused(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("list\u202eAdmin")}}), "api.json")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    assert "openapi-unsafe-name" in messages(outcome)
    assert "U+202E" in messages(outcome)
    assert not (tmp_path / "out").exists()


def test_a_hostile_title_cannot_place_files_outside_the_tree(tmp_path: Path) -> None:
    from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import

    data = document({"/a": {"get": get("a")}})
    data["info"]["title"] = "../../etc/\u202e passwd"
    spec = write(tmp_path, data)
    roots = str(tmp_path / "tree")
    outcome = run_import(OpenApiRequest(spec=str(spec), take_all=True, **hermetic(roots)))
    assert outcome.exit_code == 0, messages(outcome)
    assert [Path(p).relative_to(roots).as_posix() for p in outcome.written] == \
        ["etc_passwd/a.yaml"]
