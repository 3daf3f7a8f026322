# Varnish 7 in front of Paper Daily, with vmod xkey (Debian: apt-get install varnish
# varnish-modules). The site says what each response printed in Surrogate-Key; Varnish
# keeps it as xkey, and a PURGE from the site (CDN_PURGE_URLS=http://<varnish>/) naming
# keys in its xkey header drops every object holding any of them.
#
#   varnishd -a :80 -f /etc/varnish/default.vcl -s malloc,256m
#
# The site's own rules hold here: a request with a session, a messages cookie or
# Authorization is passed (staff, previews, forms); only the theme cookie is kept for the
# rest (the site renders and varies on it), every other cookie is dropped.
vcl 4.1;

import xkey;

backend default {
    .host = "127.0.0.1";
    .port = "8000";
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
}

# Who may purge: the site's web and worker hosts.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.xkey) {
            return (synth(400, "Name the keys to purge in the xkey header"));
        }
        set req.http.n-gone = xkey.purge(req.http.xkey);
        return (synth(200, "Purged " + req.http.n-gone + " objects"));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    if (req.url ~ "^/admin/" || req.url ~ "^/[a-z]{2}/subscribe/"
        || req.http.Authorization
        || req.http.Cookie ~ "(^|;\s*)(sessionid|messages)=") {
        return (pass);
    }
    # Only the theme cookie counts (the page cache's KEY_COOKIES).
    if (req.http.Cookie) {
        set req.http.Cookie = regsuball("; " + req.http.Cookie, "; (theme=[a-z]+)|; [^;]*", "\1");
        if (req.http.Cookie == "") {
            unset req.http.Cookie;
        }
    }
    return (hash);
}

sub vcl_hash {
    # The page differs by theme (the site sends Vary: Cookie on pages).
    if (req.http.Cookie) {
        hash_data(req.http.Cookie);
    }
}

sub vcl_backend_response {
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
    # The site says how long (Cache-Control max-age, stale-while-revalidate); its purges say
    # when sooner. Anything private or with a cookie is the builtin VCL's: not stored.
}

sub vcl_deliver {
    # RFC 9211: each cache appends its entry; the site's own comes first.
    if (obj.hits > 0) {
        set resp.http.Cache-Status = resp.http.Cache-Status + ", Varnish; hit";
    } else {
        set resp.http.Cache-Status = resp.http.Cache-Status + ", Varnish; fwd=miss; stored";
    }
    if (resp.http.Cache-Status ~ "^, ") {
        set resp.http.Cache-Status = regsub(resp.http.Cache-Status, "^, ", "");
    }
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
}
