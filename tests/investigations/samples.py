"""Realistic alert bodies, shaped like what each vendor really sends (fields per their public docs)."""

from __future__ import annotations

import json

DEFENDER_MACHINE_ID = "1e5bc9d7e413ddd7902c2932e418702b84d0cc07"
DEFENDER_SHA1 = "5f1ea2cd8ab5b2e2c6f8e0f3a1a1e5d7f9b4c2a1"
DEFENDER_SHA256 = "8b1a9953c4611296a827abf8c47804d7e6c49c6b2f6d6f5e1a0d7e3f2c1b0a99"

DEFENDER_ALERT = json.dumps(
    {
        "id": "da637472900382838869_1364969609",
        "incidentId": 1126093,
        "investigationId": None,
        "severity": "High",
        "status": "New",
        "classification": None,
        "detectionSource": "WindowsDefenderAv",
        "category": "Malware",
        "threatFamilyName": "Emotet",
        "title": "'Emotet' malware was detected",
        "description": "Malware and unwanted software are undesirable applications that perform annoying actions.",
        "alertCreationTime": "2026-11-20T09:14:21.3308814Z",
        "machineId": DEFENDER_MACHINE_ID,
        "computerDnsName": "ws-0142.corp.contoso.com",
        "rbacGroupName": "Finance",
        "aadTenantId": "a839b112-1253-6432-9bf6-94542403f21c",
        "mitreTechniques": ["T1204.002"],
        "relatedUser": {"userName": "jdoe", "domainName": "CONTOSO"},
        "evidence": [
            {
                "entityType": "File",
                "evidenceCreationTime": "2026-11-20T09:14:22.1Z",
                "sha1": DEFENDER_SHA1,
                "sha256": DEFENDER_SHA256,
                "fileName": "invoice.pdf.exe",
                "filePath": "C:\\Users\\jdoe\\Downloads",
                "processCommandLine": None,
                "detectionStatus": "Detected",
            },
            {
                "entityType": "Ip",
                "ipAddress": "185.220.101.47",
            },
            {
                "entityType": "Url",
                "url": "http://billing-update.xyz/download/invoice.pdf.exe",
            },
            {
                "entityType": "User",
                "accountName": "jdoe",
                "domainName": "CONTOSO",
                "userSid": "S-1-5-21-11111-22222-33333-1001",
                "aadUserId": "6f2c1a5e-9c4b-4e1a-8d55-2f3e0c1b7a90",
                "userPrincipalName": "jdoe@contoso.com",
            },
        ],
    }
)

CLOUDFLARE_WAF_CHANGE = json.dumps(
    {
        "alert_name": "WAF security level changed",
        "account_id": "01a7362d577a6c3019a474fd6f485823",
        "zone": {"id": "023e105f4ecef8ad9ca31a8372d0c353", "name": "shop.example.com"},
        "audit_log": {
            "id": "d5b0f326-1232-4452-8858-1089bd7168ef",
            "action": {"type": "change_setting", "result": True},
            "actor": {
                "id": "f6b5de0326bb5182b8a4840ee01ec774",
                "email": "ops-admin@example.com",
                "ip": "198.41.129.166",
                "type": "user",
            },
            "interface": "API",
            "metadata": {"name": "security_level", "type": "firewall", "value": "essentially_off"},
            "newValue": "essentially_off",
            "oldValue": "high",
            "owner": {"id": "01a7362d577a6c3019a474fd6f485823"},
            "resource": {"id": "023e105f4ecef8ad9ca31a8372d0c353", "type": "zone"},
            "when": "2026-11-20T17:31:07Z",
        },
    }
)

OKTA_SIGNIN = json.dumps(
    {
        "uuid": "dc9fd3c0-598c-11ef-8478-2b7584bf8d5a",
        "published": "2026-11-20T08:01:12.345Z",
        "eventType": "user.session.start",
        "displayMessage": "User login to Okta",
        "severity": "INFO",
        "outcome": {"result": "SUCCESS", "reason": None},
        "actor": {
            "id": "00u1qw2mqitPHM8AJ0g7",
            "type": "User",
            "alternateId": "alice.smith@contoso.com",
            "displayName": "Alice Smith",
        },
        "client": {
            "userAgent": {
                "rawUserAgent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0.0.0 Safari/537.36",
                "os": "Windows 10",
                "browser": "CHROME",
            },
            "zone": "null",
            "device": "Computer",
            "ipAddress": "91.214.124.19",
            "geographicalContext": {"city": "Amsterdam", "country": "Netherlands"},
        },
        "authenticationContext": {"authenticationStep": 0, "externalSessionId": "102bZDNFfWaQSyEZQuDgWt-uQ"},
        "securityContext": {"asNumber": 9009, "asOrg": "m247", "isp": "m247 ltd", "isProxy": True},
        "request": {"ipChain": [{"ip": "91.214.124.19", "version": "V4"}]},
    }
)

ENTRA_SIGNIN = json.dumps(
    {
        "id": "66ea54eb-6301-4ee5-be62-ff5a759b0100",
        "createdDateTime": "2026-11-20T07:42:10Z",
        "userDisplayName": "Bob Jones",
        "userPrincipalName": "bob.jones@contoso.com",
        "userId": "d7cc485d-2c1b-422c-98fd-5ce52859a4a3",
        "appDisplayName": "Office 365 Exchange Online",
        "ipAddress": "2a02:c207:3007:4512::1",
        "clientAppUsed": "Browser",
        "riskLevelDuringSignIn": "high",
        "riskEventTypes_v2": ["unfamiliarFeatures", "anonymizedIPAddress"],
        "status": {"errorCode": 0, "failureReason": "Other."},
        "deviceDetail": {"deviceId": "", "displayName": "", "operatingSystem": "Windows10", "browser": "Edge 120.0"},
        "location": {
            "city": "Kyiv",
            "countryOrRegion": "UA",
            "geoCoordinates": {"latitude": 50.45, "longitude": 30.52},
        },
    }
)

GUARDDUTY_FINDING = json.dumps(
    {
        "SchemaVersion": "2.0",
        "AccountId": "123456789012",
        "Region": "us-east-1",
        "Id": "16afba5c5c43e07c9e3e5e2e544e95df",
        "Arn": "arn:aws:guardduty:us-east-1:123456789012:detector/x/finding/16afba5c5c43e07c9e3e5e2e544e95df",
        "Type": "Backdoor:EC2/C&CActivity.B!DNS",
        "Severity": 8,
        "Title": "Command and Control server domain name queried by EC2 instance i-0b2f5c4a3e1d9c876.",
        "Resource": {
            "ResourceType": "Instance",
            "AccessKeyDetails": {
                "AccessKeyId": "ASIASZCF3EXAMPLE",
                "PrincipalId": "AROASZCF3EXAMPLE:i-0b2f5c4a3e1d9c876",
                "UserName": "web-app-role",
                "UserType": "AssumedRole",
            },
            "InstanceDetails": {
                "InstanceId": "i-0b2f5c4a3e1d9c876",
                "InstanceType": "t3.large",
                "ImageId": "ami-0c55b159cbfafe1f0",
                "NetworkInterfaces": [
                    {
                        "PrivateDnsName": "ip-10-0-1-23.ec2.internal",
                        "PrivateIpAddress": "10.0.1.23",
                        "PublicDnsName": "ec2-54-210-12-9.compute-1.amazonaws.com",
                        "PublicIp": "54.210.12.9",
                    }
                ],
            },
        },
        "Service": {
            "Action": {
                "ActionType": "DNS_REQUEST",
                "DnsRequestAction": {"Domain": "c2.malicious-panel.top", "Protocol": "UDP", "Blocked": False},
                "NetworkConnectionAction": {
                    "RemoteIpDetails": {
                        "IpAddressV4": "45.155.205.233",
                        "Organization": {"Asn": "206728", "AsnOrg": "Media Land LLC"},
                        "Country": {"CountryName": "Russia"},
                    }
                },
            },
            "Count": 4,
        },
    }
)

OKTA_MFA_RESET = json.dumps(
    {
        "eventType": "user.mfa.factor.deactivate",
        "displayMessage": "Reset factor for user",
        "actor": {"type": "User", "alternateId": "helpdesk.admin@contoso.com", "displayName": "Helpdesk Admin"},
        "target": [{"type": "User", "alternateId": "carol.white@contoso.com", "displayName": "Carol White"}],
        "client": {"ipAddress": "203.0.113.45"},
        "outcome": {"result": "SUCCESS"},
    }
)

PHISHING_REPORT = (
    "User reported message: phishing suspected.\n"
    'From: "Microsoft 365" <no-reply@micros0ft-support.online>\n'
    "To: dave.green@contoso.com\n"
    "Subject: Your password expires today\n"
    "The message links to hxxps://login-micros0ft-support[.]online/owa/verify?u=dave and "
    "attaches Password_Policy.html.\n"
)

FREE_TEXT = (
    "EDR detection on host=WS-0099 user=CONTOSO\\mallory at 2026-11-20T12:30:45Z: "
    "powershell.exe downloaded https://cdn.badsite.ru/payload.ps1 from 192.0.2.10, beaconing to 8.8.4.4 and "
    "2001:4860:4860::8888. Dropped invoice.pdf (md5 44d88612fea8a8f36de82e1278abb02f). "
    "Agent version 10.0.0.1 reported it. Contact soc@contoso.com. Namespace System.Management.Automation loaded."
)

# --- alerts whose first value alphabetically is *not* what the alert is about (entity roles) ------------

#: A Defender alert after triage started: assigned, commented on by an analyst whose address sorts first.
DEFENDER_ALERT_TRIAGED = json.dumps(
    {
        **json.loads(DEFENDER_ALERT),
        "assignedTo": "aaron.analyst@contoso.com",
        "comments": [
            {
                "comment": "Checked with the help desk, escalating.",
                "createdBy": "aaron.analyst@contoso.com",
                "createdTime": "2026-11-20T09:30:00Z",
            }
        ],
        "description": "Seen before on 10.20.30.40 and ws-0001; contact abby.admin@contoso.com.",
    }
)

#: An Entra audit event: an administrator (the subject: who did it) adds a user (affected) to a role.
ENTRA_ROLE_ASSIGNMENT = json.dumps(
    {
        "id": "Directory_1b5c4c2a-8d42-4c11-9a6e-3f1f1e2d7c10",
        "category": "RoleManagement",
        "activityDisplayName": "Add member to role",
        "activityDateTime": "2026-11-20T10:02:44Z",
        "result": "success",
        "initiatedBy": {
            "user": {
                "id": "0b4d7f4e-1b8c-4a0e-9d0b-2c6a9a1f7e11",
                "userPrincipalName": "zoe.admin@contoso.com",
                "ipAddress": "91.214.124.19",
            }
        },
        "targetResources": [
            {
                "id": "d7cc485d-2c1b-422c-98fd-5ce52859a4a3",
                "type": "User",
                "userPrincipalName": "bob.jones@contoso.com",
                "modifiedProperties": [{"displayName": "Role.DisplayName", "newValue": '"Global Administrator"'}],
            }
        ],
    }
)

#: An endpoint event forwarded by a SIEM: the affected machine, plus the servers that manage and relay it.
EDR_EVENT_VIA_SIEM = json.dumps(
    {
        "event": "Suspicious PowerShell download cradle",
        "hostname": "WS-0142",
        "user": "jdoe",
        "src_ip": "10.20.3.44",
        "dst_ip": "185.220.101.47",
        "managementServer": "epo-01.corp.contoso.com",
        "reportingHost": "collector-01.corp.contoso.com",
        "dnsServer": "10.0.0.53",
        "gateway": "10.20.0.1",
    }
)

#: A Push Security browser detection, shaped like its webhooks: the employee, the work account they used.
PUSH_DETECTION = json.dumps(
    {
        "id": "5b8e2a51-3c0f-4f7a-9b1e-6d2c4a7e9f10",
        "version": "1",
        "object": "DETECTION",
        "code": "PHISHING_SITE_CREDENTIAL_ENTRY",
        "timestamp": 1763632800,
        "new": {
            "employee": {"id": "2b6c8e0a-1d3f-4a5b-8c7d-9e0f1a2b3c4d", "email": "erin.black@contoso.com"},
            "account": {"id": "7f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f", "email": "erin.black@contoso.com"},
            "appType": "MICROSOFT_365",
            "url": "https://login-micros0ft-support.online/owa/",
            "appOwner": {"email": "anna.it@contoso.com"},
        },
    }
)
