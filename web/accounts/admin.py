"""The admin's login page uses the throttled form too (admin.py is loaded by admin autodiscovery)."""

from django.contrib import admin

from web.accounts.forms import ThrottledAdminAuthenticationForm

admin.site.login_form = ThrottledAdminAuthenticationForm
