"""Behaviours a SOC analyst recognises in process, file and network records (docs/analyst.md, "H" rules).

Each pattern is matched against one record's text (command line, parent process, file name, remote URL);
it names the ATT&CK tactic so findings read the way an analyst would write them. Patterns are plain
regexes without nested quantifiers, so a hostile command line costs linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Behaviour:
    rule: str
    name: str
    points: float
    pattern: re.Pattern[str]


def _p(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        "H1",
        "credential dumping (LSASS memory, SAM/SECURITY hives, Mimikatz)",
        4.0,
        _p(
            r"sekurlsa|mimikatz|lsadump|procdump\S*\s[^\n]{0,80}lsass|comsvcs(?:\.dll)?[^\n]{0,40}minidump"
            r"|minidump[^\n]{0,80}lsass|lsass\S*\.dmp|comsvcs(?:\.dll)?[\"']?,?\s*#\s*24"
            r"|reg(?:\.exe)?[\"']?\s+save\s+[\"']?hklm\\(?:sam|security|system)"
            r"|ntdsutil[^\n]{0,60}ifm|vssadmin[^\n]{0,40}create\s+shadow[^\n]{0,80}ntds|nanodump|pypykatz"
        ),
    ),
    Behaviour(
        "H2",
        "cloud instance-metadata credential read",
        3.5,
        _p(
            r"169\.254\.169\.254[^\s\"']{0,40}(?:iam/security-credentials|identity|token)"
            r"|metadata\.google\.internal[^\s\"']{0,60}token|169\.254\.169\.254/metadata/identity"
        ),
    ),
    Behaviour(
        "H3",
        "encoded or download-cradle PowerShell",
        3.0,
        _p(
            r"(?:powershell|pwsh)[^\n]{0,200}\s[-/](?:e|en|enc|enco|encod|encode|encoded|encodedcommand|ec)\s+[a-z0-9+/=]{16,}"
            r"|frombase64string|downloadstring|downloadfile|downloaddata|invoke-webrequest[^\n]{0,200}\|\s*iex"
            r"|\biex\s*\(|invoke-expression[^\n]{0,120}(?:http|net\.webclient)|net\.webclient"
            r"|-w(?:indowstyle)?\s+hidden[^\n]{0,200}(?:http|iex)"
        ),
    ),
    Behaviour(
        "H4",
        "living-off-the-land binary fetching or running remote code",
        3.0,
        _p(
            r"certutil(?:\.exe)?[^\n]{0,40}[-/](?:urlcache|decode|split)"
            r"|mshta(?:\.exe)?[\"']?\s+[\"']?(?:https?|vbscript|javascript)"
            r"|regsvr32(?:\.exe)?[^\n]{0,60}/i:\s*https?|rundll32(?:\.exe)?[^\n]{0,40}javascript:"
            r"|bitsadmin(?:\.exe)?[^\n]{0,40}/transfer|wmic(?:\.exe)?[^\n]{0,80}process\s+call\s+create"
            r"|msiexec(?:\.exe)?[^\n]{0,40}/q[^\n]{0,40}https?://|installutil(?:\.exe)?[^\n]{0,40}/u"
        ),
    ),
    Behaviour(
        "H5",
        "ransomware preparation (shadow copies or backups deleted, recovery disabled)",
        4.0,
        _p(
            r"vssadmin(?:\.exe)?[^\n]{0,40}delete\s+shadows|wmic(?:\.exe)?[^\n]{0,40}shadowcopy\s+delete"
            r"|win32_shadowcopy[^\n]{0,120}\.delete\("
            r"|wbadmin(?:\.exe)?[^\n]{0,40}delete|bcdedit(?:\.exe)?[^\n]{0,60}recoveryenabled\s+no"
            r"|\.(?:locked|encrypted|crypt|lockbit)\b|readme[_-]?(?:to[_-]?)?decrypt|how[_-]to[_-]decrypt"
        ),
    ),
    Behaviour(
        "H6",
        "persistence (run key, scheduled task, new service, WMI subscription)",
        2.0,
        _p(
            r"currentversion\\run(?:once)?\b|schtasks(?:\.exe)?[^\n]{0,20}/create|new-scheduledtask|register-scheduledtask"
            r"|\bsc(?:\.exe)?[\"']?\s+create\s|new-service\s|__eventfilter|commandlineeventconsumer"
            r"|startup\\[^\n]{0,80}\.(?:lnk|vbs|bat|exe)"
        ),
    ),
    Behaviour(
        "H7",
        "data staged in an archive",
        2.0,
        _p(
            r"\b(?:7z|7za|rar|winrar)(?:\.exe)?[\"']?\s+a\s|compress-archive|makecab(?:\.exe)?\s|tar(?:\.exe)?\s+-?c[a-z]*f"
            r"|zip(?:\.exe)?\s+-r"
        ),
    ),
    Behaviour(
        "H8",
        "data sent out (sync or upload tool, file-sharing service)",
        3.0,
        _p(
            r"rclone(?:\.exe)?[\"']?\s[^\n]{0,40}(?:copy|sync|move)|megacmd|mega-put"
            r"|curl(?:\.exe)?[\"']?\s[^\n]{0,80}(?-i:\s-T\s|\s--upload-file\s|\s-F\s)"
            r"|transfer\.sh|anonfiles|file\.io|gofile\.io|mega\.nz|pastebin\.com|temp\.sh|wetransfer\.com"
            r"|ngrok(?:\.io|\.exe|\s)"
        ),
    ),
    Behaviour(
        "H9",
        "security tooling turned off",
        3.0,
        _p(
            r"set-mppreference[^\n]{0,80}-disable\w*\s+(?:\$?true|1)\b|add-mppreference[^\n]{0,40}-exclusion"
            r"|\bsc(?:\.exe)?[\"']?\s+(?:stop|delete|config)\s+(?:windefend|sense|mpssvc)|wevtutil(?:\.exe)?\s+cl\s"
            r"|clear-eventlog|auditpol(?:\.exe)?[^\n]{0,40}/clear|netsh\s+advfirewall\s+set\s+\w+\s+state\s+off"
        ),
    ),
    Behaviour(
        "H10",
        "known offensive tool",
        3.0,
        _p(
            r"\b(?:cobaltstrike|beacon\.(?:exe|dll)|sharphound|bloodhound|rubeus|kerberoast|psexesvc|impacket"
            r"|lazagne|seatbelt|sliver|metasploit|meterpreter|xmrig|minerd|stratum\+tcp)\b"
        ),
    ),
)

#: Processes that talk to the internet for a living; anything else reaching a public address is worth a look.
NETWORK_PROCESSES = frozenset(
    {
        "chrome.exe",
        "msedge.exe",
        "firefox.exe",
        "iexplore.exe",
        "outlook.exe",
        "teams.exe",
        "ms-teams.exe",
        "onedrive.exe",
        "svchost.exe",
        "msmpeng.exe",
        "mssense.exe",
        "senseir.exe",
        "zoom.exe",
        "slack.exe",
        "safari",
        "brave.exe",
        "opera.exe",
        "dropbox.exe",
        "googleupdate.exe",
        "microsoftedgeupdate.exe",
        "officeclicktorun.exe",
        "amazon-cloudwatch-agent",
        "amazon-ssm-agent",
        "ssm-agent-worker",
        "ecs-agent",
        "google_guest_agent",
        "waagent",
    }
)
#: Script hosts and LOLBins: a connection from one of these to a public address is a classic C2 or download.
SCRIPT_PROCESSES = frozenset(
    {
        "powershell.exe",
        "pwsh.exe",
        "cmd.exe",
        "wscript.exe",
        "cscript.exe",
        "mshta.exe",
        "rundll32.exe",
        "regsvr32.exe",
        "certutil.exe",
        "bitsadmin.exe",
        "msiexec.exe",
        "installutil.exe",
        "curl.exe",
        "wget.exe",
        "python.exe",
        "rclone.exe",
        "bash",
        "sh",
        "curl",
        "wget",
        "python",
        "python3",
        "nc",
        "ncat",
    }
)


def behaviours_in(text: str) -> list[Behaviour]:
    """Every behaviour whose pattern occurs in `text`, in rule order."""
    return [behaviour for behaviour in BEHAVIOURS if behaviour.pattern.search(text)]


#: The cloud platform's own agents: they read instance-metadata credentials by design.
CLOUD_AGENTS = frozenset(
    {
        "amazon-cloudwatch-agent",
        "amazon-ssm-agent",
        "ssm-agent-worker",
        "ecs-agent",
        "aws-otel-collector",
        "google_guest_agent",
        "google_osconfig_agent",
        "waagent",
        "walinuxagent",
    }
)
