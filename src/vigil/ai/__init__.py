"""The investigator: drafts playbooks for new alert types and analyses the evidence they gather."""
