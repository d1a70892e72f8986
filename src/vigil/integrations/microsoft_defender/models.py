"""Defender for Endpoint records as playbooks see them (snake_case), parsed from the API's camelCase JSON."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from vigil.integrations.framework import VendorRecord, VendorStrEnum, optional


class AlertSeverity(VendorStrEnum):
    UNSPECIFIED = "UnSpecified"
    INFORMATIONAL = "Informational"
    LOW = "Low"
    MEDIUM = "Medium"
    HIGH = "High"


class AlertStatus(VendorStrEnum):
    UNKNOWN = "Unknown"
    NEW = "New"
    IN_PROGRESS = "InProgress"
    RESOLVED = "Resolved"


class IsolationType(VendorStrEnum):
    FULL = "Full"
    SELECTIVE = "Selective"


class LiveResponseCommandType(VendorStrEnum):
    PUT_FILE = "PutFile"
    RUN_SCRIPT = "RunScript"
    GET_FILE = "GetFile"


class IpAddress(VendorRecord):
    ip_address: str | None = optional("An IP address of the machine.")
    mac_address: str | None = optional("MAC address of the adapter, e.g. 8CEC4B897E73.")
    operational_status: str | None = optional("Adapter status, e.g. Up.")


class Machine(VendorRecord):
    id: str = Field(description="Defender machine ID (40 hex characters).")
    computer_dns_name: str | None = optional("Machine fully qualified name.")
    os_platform: str | None = optional("Operating system platform, e.g. Windows11.")
    version: str | None = optional("Operating system version, e.g. 1709.")
    health_status: str | None = optional("Sensor health: Active, Inactive, ImpairedCommunication, NoSensorData...")
    onboarding_status: str | None = optional("Onboarding status, e.g. onboarded.")
    risk_score: str | None = optional("Risk score: None, Informational, Low, Medium, High.")
    exposure_level: str | None = optional("Exposure level: None, Low, Medium, High.")
    device_value: str | None = optional("Device value: Low, Normal, High.")
    last_ip_address: str | None = optional("Last IP address on the machine's local network.")
    last_external_ip_address: str | None = optional("Last IP address the machine used to reach the internet.")
    first_seen: str | None = optional("First time the machine was seen (ISO 8601 UTC).")
    last_seen: str | None = optional("Last time the machine was seen (ISO 8601 UTC).")
    rbac_group_name: str | None = optional("Device group name.")
    aad_device_id: str | None = optional("Entra ID device ID when the machine is joined.")
    machine_tags: list[str] = Field(default_factory=list, description="Tags set on the machine.")
    ip_addresses: list[IpAddress] = Field(default_factory=list, description="Network adapters and their addresses.")


class RelatedUser(VendorRecord):
    user_name: str | None = optional("User name of the user related to the alert.")
    domain_name: str | None = optional("Domain of that user.")


class Evidence(VendorRecord):
    entity_type: str | None = optional("Evidence kind: User, Process, File, Ip, Url, ...")
    evidence_creation_time: str | None = optional("When the evidence was recorded (ISO 8601 UTC).")
    file_name: str | None = optional("File name, for file and process evidence.")
    file_path: str | None = optional("File path, for file and process evidence.")
    sha1: str | None = optional("SHA-1 of the file.")
    sha256: str | None = optional("SHA-256 of the file.")
    process_id: int | None = optional("Process ID, for process evidence.")
    process_command_line: str | None = optional("Command line, for process evidence.")
    ip_address: str | None = optional("IP address, for IP evidence.")
    url: str | None = optional("URL, for URL evidence.")
    account_name: str | None = optional("Account name, for user evidence.")
    domain_name: str | None = optional("Account domain, for user evidence.")
    user_principal_name: str | None = optional("User principal name, for user evidence.")
    detection_status: str | None = optional("Detection status, e.g. Detected.")


class Alert(VendorRecord):
    id: str = Field(description="Alert ID, e.g. da637472900382838869_1364969609.")
    incident_id: int | None = optional("Incident the alert belongs to.")
    investigation_id: int | None = optional("Automated investigation ID, if any.")
    assigned_to: str | None = optional("Owner of the alert.")
    severity: str | None = optional("UnSpecified, Informational, Low, Medium or High.")
    status: str | None = optional("Unknown, New, InProgress or Resolved.")
    classification: str | None = optional("TruePositive, InformationalExpectedActivity, FalsePositive or null.")
    determination: str | None = optional("Determination of the alert.")
    investigation_state: str | None = optional("State of the automated investigation.")
    detection_source: str | None = optional("Detection source, e.g. WindowsDefenderAtp.")
    category: str | None = optional("Alert category, e.g. Execution.")
    threat_family_name: str | None = optional("Threat family.")
    title: str | None = optional("Alert title.")
    description: str | None = optional("Alert description.")
    alert_creation_time: str | None = optional("When the alert was created (ISO 8601 UTC).")
    first_event_time: str | None = optional("First event that triggered the alert.")
    last_event_time: str | None = optional("Last event that triggered the alert.")
    last_update_time: str | None = optional("Last update of the alert.")
    resolved_time: str | None = optional("When the alert was resolved.")
    machine_id: str | None = optional("ID of the machine the alert is about.")
    computer_dns_name: str | None = optional("Name of the machine the alert is about.")
    rbac_group_name: str | None = optional("Device group of that machine.")
    mitre_techniques: list[str] = Field(default_factory=list, description="MITRE ATT&CK technique IDs.")
    related_user: RelatedUser | None = optional("User related to the alert.")
    evidence: list[Evidence] = Field(default_factory=list, description="Evidence (only when requested).")


class CommandParam(VendorRecord):
    key: str = Field(description="Parameter name: FileName (PutFile), ScriptName/Args (RunScript), Path (GetFile).")
    value: str = Field(description="Parameter value.")


class CommandSpec(VendorRecord):
    type: str = Field(description="Command type: PutFile, RunScript or GetFile.")
    params: list[CommandParam] = Field(default_factory=list, description="Command parameters.")


class ActionCommand(VendorRecord):
    index: int = Field(description="Position of the command in the session.")
    command_status: str | None = optional("Created, Completed or Failed.")
    start_time: str | None = optional("When the command started.")
    end_time: str | None = optional("When the command ended.")
    errors: list[Any] = Field(default_factory=list, description="Errors the command reported.")
    command: CommandSpec | None = optional("The command as submitted.")


class MachineAction(VendorRecord):
    id: str = Field(description="Machine action ID (GUID), used to follow its status.")
    type: str | None = optional("Action type, e.g. LiveResponse or Isolate.")
    scope: str | None = optional("Scope, e.g. Full or Selective for isolation.")
    status: str | None = optional("Pending, InProgress, Succeeded, Failed, TimeOut or Cancelled.")
    requestor: str | None = optional("Who requested the action.")
    requestor_comment: str | None = optional("Comment given with the request.")
    machine_id: str | None = optional("Target machine ID.")
    computer_dns_name: str | None = optional("Target machine name.")
    creation_date_time_utc: str | None = optional("When the action was created (ISO 8601 UTC).")
    last_update_date_time_utc: str | None = optional("Last status change (ISO 8601 UTC).")
    commands: list[ActionCommand] = Field(default_factory=list, description="Live response commands and status.")
