"""Starts and stops the durable engine in a process (`vigil serve` or `vigil worker`).

Three loops keep "no alert is ever lost" true:
* the submitter moves Created alerts that have a type onto the queue, off the request path
  (E1 only commits the alert row and wakes it);
* the orphan scan (at start, then every minute) sets going again the investigations no workflow will finish by
  itself (`recovery.py`);
* the heartbeat stamps this process's executor (a new identity per start, `executors.py`) as alive and resumes
  the pending workflows of every executor whose process has ended: at once when that is provable on this host,
  after `dead_worker_seconds` of silence otherwise (one live engine claims each).
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
import uuid

from dbos import DBOS, DBOSConfig

from vigil import __version__
from vigil.ai.factory import Investigators
from vigil.ai.llm.config import Limits
from vigil.ai.organization_model import choice_for, service_choice
from vigil.db.session import Database
from vigil.integrations.bridge import AsyncBridge
from vigil.integrations.secrets import SecretBox
from vigil.investigations import dbos_adapter, flows
from vigil.investigations.executors import ExecutorRegistry
from vigil.investigations.recovery import recover_stranded
from vigil.investigations.steps import ConnectionResolver, StepPolicy, StepRunner, playbook_skill_inputs
from vigil.investigations.workflow import (
    CHECKPOINT_SLICE_SECONDS,
    QUEUE_NAME,
    QUEUE_NOW,
    WAITING_AT_CHECKPOINTS,
    EngineRuntime,
    install_runtime,
)
from vigil.knowledge import bundle as knowledge_bundle
from vigil.settings import Settings

logger = logging.getLogger("vigil.engine")
IDLE_SCAN_SECONDS = 2.0
ORPHAN_SCAN_SECONDS = 60.0
#: The loops notice a stop between two database operations; a thread stuck in one (a frozen database) is a daemon
#: and is not waited for longer than this.
STOP_JOIN_SECONDS = 5.0


class Engine:
    def __init__(self, settings: Settings, db: Database, resolver: ConnectionResolver, role: str) -> None:
        self.settings = settings
        self.db = db
        self.resolver = resolver
        knowledge_bundle.set_disabled(settings.knowledge_disabled)  # the analyst runs in this process
        # VIGIL_EXECUTOR_ID names the process; its DBOS executor id is that name plus a token new at every start.
        self.registry = ExecutorRegistry(
            db, settings.executor_id or f"{socket.gethostname()}-{role}", settings.dead_worker_seconds
        )
        self.executor_id = self.registry.executor_id
        self._wake = threading.Event()
        self._handoffs: queue.SimpleQueue[tuple[uuid.UUID, int]] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._bridge: AsyncBridge | None = None
        self._investigators: Investigators | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        self.registry.register()  # before DBOS runs anything under the id, so its workflows always have a row
        self._bridge = AsyncBridge()
        # Model requests run on the same event-loop thread as skills: one loop and connection pool per process.
        self._investigators = Investigators(Limits.from_settings(self.settings), playbook_skill_inputs(), self._bridge)
        self._investigators.require(service_choice(self.settings))  # an unusable model fails the start
        box = SecretBox.from_settings(self.settings)
        install_runtime(
            EngineRuntime(
                db=self.db,
                investigators=self._investigators,
                model_choice=lambda session, organization_uuid: choice_for(
                    session, organization_uuid, self.settings, box
                ),
                steps=StepRunner(
                    db=self.db,
                    bridge=self._bridge,
                    resolver=self.resolver,
                    policy=StepPolicy(
                        retry_attempts=self.settings.skill_retry_attempts,
                        retry_backoff_seconds=self.settings.skill_retry_backoff_seconds,
                        timeout_seconds=self.settings.skill_timeout_seconds,
                        fault_delay_seconds=self.settings.engine_step_delay_seconds,
                    ),
                ),
                max_auto_retries=self.settings.max_auto_retries,
                retry_backoff_seconds=self.settings.retry_backoff_seconds,
            )
        )
        config: DBOSConfig = {
            "name": "vigil",
            "system_database_url": self.settings.workflow_database_url,
            "executor_id": self.executor_id,
            "application_version": __version__,
            "notification_listener_polling_interval_sec": 0.2,
            "log_level": "WARNING",
            "db_engine_kwargs": self.db.workflow_engine_kwargs(),  # bounded connects and pool waits (db/postgres.py)
        }
        DBOS(config=config)
        DBOS.launch()
        DBOS.register_queue(
            QUEUE_NAME,
            worker_concurrency=self.settings.worker_concurrency,
            polling_interval_sec=self.settings.queue_poll_seconds,
        )
        for target, name in ((self._submit_loop, "vigil-submitter"), (self._heartbeat_loop, "vigil-heartbeat")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        logger.info("engine started executor_id=%s", self.executor_id)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout=STOP_JOIN_SECONDS)
        DBOS.destroy(destroy_registry=False)
        # A workflow waiting at a checkpoint sits in a DBOS recv slice; once it ends, the workflow finds DBOS
        # stopped and leaves (it stays pending and resumes on the next start). Let it, so nothing outlives us.
        if not WAITING_AT_CHECKPOINTS.wait_until_none(CHECKPOINT_SLICE_SECONDS + 5):
            logger.warning("a workflow waiting at a chat checkpoint did not stop in time")
        install_runtime(None)
        if self._investigators is not None:
            self._investigators.close()
        if self._bridge is not None:
            self._bridge.close()
        logger.info("engine stopped executor_id=%s", self.executor_id)

    def wake(self) -> None:
        """Called after intake commits: submit without waiting for the next idle scan."""
        self._wake.set()

    def enqueue(self, alert_uuid: uuid.UUID, attempt: int) -> None:
        """`flows.Enqueuer` for requests: hand the committed attempt to the submitter thread and return (why, and
        what a crash before the hand-off is done leaves: `flows`)."""
        self._handoffs.put((alert_uuid, attempt))
        self._wake.set()

    def _enqueue_handoffs(self) -> None:
        while True:
            try:
                alert_uuid, attempt = self._handoffs.get_nowait()
            except queue.Empty:
                return
            try:
                QUEUE_NOW.enqueue(alert_uuid, attempt)
            except Exception:
                self._handoffs.put((alert_uuid, attempt))  # kept for the next turn of the loop
                raise

    # -- submission and recovery -----------------------------------------------------------------

    def submit_pending(self) -> int:
        """Enqueue Created alerts that have a type, then mark them Submitted; returns how many."""
        return flows.submit_created(self.db, QUEUE_NOW, self._stop.is_set)

    def recover_orphans(self) -> int:
        """Set going again the investigations no workflow would finish by itself; returns how many."""
        recovered = recover_stranded(self.db, self.settings.max_auto_retries, self._stop.is_set)
        return recovered.enqueued + recovered.resumed + recovered.restarted

    def _submit_loop(self) -> None:
        # The first scan runs here, not in start(): a backlog of thousands of alerts must not delay serving.
        last_orphan_scan = time.monotonic() - ORPHAN_SCAN_SECONDS - 1
        while not self._stop.is_set():
            try:
                self._enqueue_handoffs()
                self.submit_pending()
                if time.monotonic() - last_orphan_scan > ORPHAN_SCAN_SECONDS:
                    last_orphan_scan = time.monotonic()
                    self.recover_orphans()
            except Exception:
                logger.exception("submitting investigations failed; retrying")
                self._stop.wait(1.0)
            self._wake.wait(IDLE_SCAN_SECONDS)
            self._wake.clear()

    # -- liveness and takeover -------------------------------------------------------------------

    def take_over_dead_workers(self) -> list[str]:
        """Claim executors whose process has ended (one claimer wins each) and have DBOS re-enqueue their pending
        workflows for whichever live engine dequeues them."""
        claimed = self.registry.claim_ended()
        for executor_id in claimed:
            taken = dbos_adapter.recover_pending_workflows(executor_id)
            logger.warning("took over %s workflows of ended executor %s", taken, executor_id)
        return claimed

    def _heartbeat_loop(self) -> None:
        # Look at once: a replacement resumes its predecessor's work right after starting, not a beat later.
        while not self._stop.is_set():
            try:
                if not self.registry.stamp():
                    logger.error(
                        "executor %s was judged dead (silent > %ss) and its workflows were resumed elsewhere",
                        self.executor_id,
                        self.settings.dead_worker_seconds,
                    )
                self.take_over_dead_workers()
            except Exception:
                logger.exception("heartbeat failed; retrying")
            self._stop.wait(self.settings.heartbeat_seconds)


def build_engine(settings: Settings, db: Database, role: str) -> Engine:
    """The engine wired to real connections (decrypted per call) and the vendor endpoints in settings."""
    from vigil.integrations.http import OutboundClient
    from vigil.integrations.policy import OutboundPolicy
    from vigil.integrations.resolver import ConnectionsResolver
    from vigil.integrations.secrets import SecretBox
    from vigil.integrations.service import endpoints_from_settings

    resolver = ConnectionsResolver(
        box=SecretBox.from_settings(settings),
        endpoints=endpoints_from_settings(settings),
        http=OutboundClient(policy=OutboundPolicy.from_settings(settings)),
    )
    return Engine(settings, db, resolver, role)
