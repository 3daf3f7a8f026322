"""Subscribers, deliveries and bounces for staff. Addresses appear here and nowhere public."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from subscriptions import services
from subscriptions.models import Bounce, Delivery, MailClaim, Subscriber


class DeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    can_delete = False
    fields = ["daily", "status", "attempts", "sent_at", "last_error"]
    readonly_fields = fields
    ordering = ["-created_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Subscriber)
class SubscriberAdmin(admin.ModelAdmin):
    list_display = ["email", "track", "language", "topic", "status", "failure_count", "created_at"]
    list_filter = ["status", "track", "language", "topic"]
    search_fields = ["email"]
    list_select_related = ["track", "topic"]
    readonly_fields = [
        "token",
        "failure_count",
        "created_at",
        "confirmed_at",
        "unsubscribed_at",
        "suspended_at",
    ]
    # The track and topic beside the address, as before they moved below the shared fields.
    fields = ["email", "track", "language", "topic", "status", *readonly_fields]
    inlines = [DeliveryInline]
    actions = ["unsubscribe"]

    @admin.action(description=_("Unsubscribe the selected subscribers"))
    def unsubscribe(self, request, queryset) -> None:
        for subscriber in queryset:
            services.subscriber_unsubscribe(subscriber=subscriber)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["daily", "subscriber", "status", "attempts", "sent_at", "created_at"]
    list_filter = ["status", "daily__track", "daily__date"]
    search_fields = ["subscriber__email", "message_id"]
    list_select_related = ["daily__track", "subscriber__track"]
    readonly_fields = ["id", "subscriber", "daily", *(f.name for f in MailClaim._meta.fields)]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # written by the sender only: the row is its claim


@admin.register(Bounce)
class BounceAdmin(admin.ModelAdmin):
    list_display = ["email", "kind", "created_at", "detail"]
    list_filter = ["kind", "created_at"]
    search_fields = ["email", "detail"]
    readonly_fields = ["email", "kind", "detail", "delivery", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False
