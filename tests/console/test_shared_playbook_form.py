"""The Investigators page's alert-types form: a plain CSRF form post maps a similar type to this playbook and
removes it again; a refused mapping is shown on the page with the API's status."""

from __future__ import annotations

import uuid

import httpx

from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from tests.support.signin import sign_in
from vigil.orgs.service import get_organization_by_code
from vigil.playbooks import service as playbooks
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition

TYPE = "Impossible travel sign-in"
SIMILAR = "Impossible travel sign-in (beta rule)"


def _serving(harness: Harness, alert_type: str) -> uuid.UUID | None:
    """The playbook the engine would pin an ACME okta alert of this type to (and the alert pages link to)."""
    with harness.db.read() as session:
        organization = get_organization_by_code(session, "ACME")
        assert organization is not None
        ref = playbooks.find_existing(session, organization.organization_uuid, "okta", alert_type)
        linked = playbooks.serving_playbooks(session, {organization.organization_uuid}, {alert_type})
    pinned = None if ref is None else ref.playbook_uuid
    assert linked.get((organization.organization_uuid, "okta", alert_type)) == pinned  # alert pages link to it
    return pinned


def test_alert_types_form_maps_and_unmaps_a_similar_type(harness: Harness) -> None:
    csrf = sign_in(harness, "operator@vigil.test")
    harness.add_org("ACME")
    definition = PlaybookDefinition(steps=[AnalyzeStep(name="AI analysis")])
    shared = install_playbook(harness.db, "ACME", "okta", TYPE, definition)
    own = install_playbook(harness.db, "ACME", "okta", SIMILAR, definition)
    other = install_playbook(harness.db, "ACME", "okta", "Sign-in from a new country", definition)
    page = f"/investigators/{shared}"

    def post(op: str, alert_type: str) -> httpx.Response:
        return harness.client.post(
            f"{page}/alert-types",
            data={"op": op, "alert_type": alert_type, "csrf_token": csrf(page)},
            follow_redirects=False,
        )

    added = post("add", SIMILAR)
    assert added.status_code == 303
    assert _serving(harness, SIMILAR) == shared
    shown = harness.client.get(page).text
    assert SIMILAR in shown and 'name="op" value="remove"' in shown

    refused = post("add", TYPE)  # the playbook's own type
    assert refused.status_code == 422
    assert "not its own" in refused.text
    taken = harness.client.post(
        f"/investigators/{other}/alert-types",
        data={"op": "add", "alert_type": SIMILAR, "csrf_token": csrf(page)},
        follow_redirects=False,
    )
    assert taken.status_code == 409 and "Remove it there first" in taken.text

    assert post("remove", SIMILAR).status_code == 303
    assert _serving(harness, SIMILAR) == own
    assert 'name="op" value="remove"' not in harness.client.get(page).text
