# Sourced by the Postgres and Redis entrypoints: refuse a weak password before
# it is used, so a volume is never created with one (fixing .env afterwards
# would not change the password the database was created with). The rules are
# web/config/settings_production.py's service_password_problem, which the web
# and worker apply to the same passwords; tests/deploy/test_password_rules.py
# holds the two to the same answers.

# weak_password NAME VALUE: prints what is wrong and succeeds when VALUE is weak; fails (prints nothing) when it is fine.
weak_password() {
    if [ -z "$2" ]; then
        echo "$1 is not set"
        return 0
    fi
    case "$(printf '%s' "$2" | tr 'A-Z' 'a-z')" in
        mlprep | postgres | redis | password | changeme | secret | admin)
            echo "$1 is a default password"
            return 0
            ;;
    esac
    if [ "$(printf '%s' "$2" | wc -m)" -lt 12 ] || [ "$(printf '%s' "$2" | fold -w1 | sort -u | wc -l)" -lt 5 ]; then
        echo "$1 is too weak (use at least 12 random characters)"
        return 0
    fi
    return 1
}

# refuse_weak_password NAME: exit the entrypoint with a message naming NAME when its value is weak.
refuse_weak_password() {
    eval "value=\${$1:-}"
    # shellcheck disable=SC2154 # set by the eval above
    if problem=$(weak_password "$1" "$value"); then
        echo "refusing to start: $problem; scripts/compose-env.sh writes .env with random passwords" >&2
        exit 1
    fi
}
