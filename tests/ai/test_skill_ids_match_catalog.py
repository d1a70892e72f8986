"""The built-in analyst names skills by id; a renamed skill must fail here, not vanish from playbooks."""

from vigil.ai.builtin.catalog import SkillId
from vigil.integrations.catalog import all_skills
from vigil.investigations.steps import INTERNAL_SKILLS


def test_every_skill_id_the_analyst_uses_exists() -> None:
    known = {skill.id for skill in all_skills()} | set(INTERNAL_SKILLS)
    assert {str(skill_id) for skill_id in SkillId} <= known
