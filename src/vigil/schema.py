"""Every domain's tables, so `Base.metadata` is complete for Alembic and the schema tests.

At the top of the layers (beside `app`): it names every domain, which nothing below the domains may do.
"""

from vigil.alerts import models as alerts_models
from vigil.auth import models as auth_models
from vigil.cases import models as cases_models
from vigil.db.base import Base
from vigil.facts import models as facts_models
from vigil.integrations import models as integrations_models
from vigil.integrations.catalog import vendor_modules
from vigil.investigations import models as investigations_models
from vigil.orgs import models as orgs_models
from vigil.playbooks import models as playbooks_models
from vigil.users import models as users_models

#: The tables vendor folders keep (a chat product's inbound deliveries), found the way the catalog finds the vendors.
vendor_models = vendor_modules("models")

__all__ = [
    "Base",
    "alerts_models",
    "auth_models",
    "cases_models",
    "facts_models",
    "integrations_models",
    "investigations_models",
    "orgs_models",
    "playbooks_models",
    "users_models",
    "vendor_models",
]
