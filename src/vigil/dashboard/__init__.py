"""The SOC dashboard's figures: per-day volumes, response times, automation rate and top types and entities."""
