"""Imports every domain's tables so `Base.metadata` is complete (Alembic, tests)."""

from vigil.alerts import models as alerts_models
from vigil.auth import models as auth_models
from vigil.db.base import Base
from vigil.integrations import models as integrations_models
from vigil.orgs import models as orgs_models

__all__ = ["Base", "alerts_models", "auth_models", "integrations_models", "orgs_models"]
