"""The capabilities the profile tests compile: the documentation's weather and CRM tools,
as YAML documents (tests.support.trees builds them)."""

from __future__ import annotations

WEATHER = """\
apiVersion: capc/v1
kind: Capability
code: get_weather
name: Weather
type: api
options:
  description: Current weather for a city.
  url: https://api.example.com/weather
  params:
    city: {type: string, description: The city name, required: true}
"""

CRM = """\
apiVersion: capc/v1
kind: Capability
code: crm_search
name: CRM search
type: api
options:
  description: Search contacts in the CRM by name, e-mail address or company.
  url: https://crm.example.com/search
  params:
    q: {type: string, description: Search text, required: true}
---
apiVersion: capc/v1
kind: Capability
code: crm_create
name: CRM create
type: api
options:
  description: Create a contact in the CRM.
  method: POST
  url: https://crm.example.com/contacts
  body:
    name: {type: string, description: Full name, required: true}
"""

