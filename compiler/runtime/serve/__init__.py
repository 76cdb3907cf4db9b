"""``capc serve``: the reviewed tools of a manifest served to any MCP client (SPEC §15).

``identity`` holds the ``Identity`` value and the ``Authenticator`` protocol an
authenticator implements; the application factory lives beside it.
"""
