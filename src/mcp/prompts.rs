//! Prompts: the two questions people bring to tldsnap most, as templates a host offers
//! its user (a slash command, a menu entry). A prompt is text only: it tells the model
//! which tools answer the question and what a good answer weighs (renewal against
//! first-year price, promotions, the ICANN fee, transfer paths), and fetches nothing,
//! so getting one costs no credit and needs no key; the tool calls it leads to are
//! metered as any.

use serde_json::{Value, json};

use super::code;

/// One prompt: its name, what it is for, its arguments (name, description, required).
struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
}

const PROMPTS: &[Prompt] = &[
    Prompt {
        name: "compare_registrars",
        title: "Compare registrars for a TLD",
        description: "Which registrar to buy a TLD from: the cheapest over the years you will keep it, renewals and promotions weighed, not only the first year.",
        arguments: &[
            ("tld", "The TLD, without a dot (dev, co.uk).", true),
            (
                "years",
                "How many years the domain will be kept (default 5).",
                false,
            ),
        ],
    },
    Prompt {
        name: "audit_portfolio",
        title: "Audit a domain portfolio",
        description: "What a list of held domains costs to keep, where each renews cheapest, and what moving them would save.",
        arguments: &[(
            "domains",
            "The domains held, separated by commas, spaces or new lines; `name@registrar` says where one is held now.",
            true,
        )],
    },
];

/// `prompts/list`.
pub fn list() -> Value {
    let prompts: Vec<Value> = PROMPTS
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "title": p.title,
                "description": p.description,
                "arguments": p.arguments.iter().map(|(name, description, required)| json!({
                    "name": name, "description": description, "required": required,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "prompts": prompts })
}

/// `prompts/get`: the prompt's messages with its arguments in place.
pub fn get(params: &Value) -> Result<Value, (i64, String)> {
    let Some(name) = params["name"].as_str() else {
        return Err((
            code::INVALID_PARAMS,
            "params.name (a string) is required".into(),
        ));
    };
    let Some(prompt) = PROMPTS.iter().find(|p| p.name == name) else {
        return Err((code::INVALID_PARAMS, format!("unknown prompt: {name}")));
    };
    let args = match &params["arguments"] {
        Value::Null => &serde_json::Map::new(),
        Value::Object(a) => a,
        _ => {
            return Err((code::INVALID_PARAMS, "arguments must be an object".into()));
        }
    };
    let arg = |key: &str| -> Result<Option<String>, (i64, String)> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
            Some(_) => Err((code::INVALID_PARAMS, format!("`{key}` must be a string"))),
        }
    };
    for key in args.keys() {
        if !prompt.arguments.iter().any(|(n, _, _)| n == key) {
            return Err((
                code::INVALID_PARAMS,
                format!("{name} takes no argument `{key}`"),
            ));
        }
    }
    for (key, _, required) in prompt.arguments {
        if *required && arg(key)?.is_none() {
            return Err((code::INVALID_PARAMS, format!("`{key}` is required")));
        }
    }
    let text = match prompt.name {
        "compare_registrars" => {
            let tld = arg("tld")?.unwrap_or_default();
            let tld = tld.trim_start_matches('.');
            let years = match arg("years")? {
                None => 5,
                Some(y) => match y.parse::<u32>() {
                    Ok(y @ 1..=10) => y,
                    _ => {
                        return Err((
                            code::INVALID_PARAMS,
                            "`years` must be a whole number from 1 to 10".into(),
                        ));
                    }
                },
            };
            format!(
                "Which registrar should I register a .{tld} domain with, keeping it {years} year{s}?\n\n\
                 Use tldsnap's tools: `tld_overview` with tld \"{tld}\" for the TLD at a glance, then \
                 `cheapest` with tlds \"{tld}\" (limit 10) for the ranked offers with their renewal \
                 prices and 5-year totals. Rank the registrars by what {years} year{s} cost in all: \
                 the first year's price plus {renewals} renewal{rs}, the ICANN fee included. Say \
                 where a low first-year price is a promotion that renewals do not keep, and what \
                 a transfer costs where it matters. Give the three best choices with their \
                 {years}-year cost and the date of the data.",
                s = if years == 1 { "" } else { "s" },
                renewals = years - 1,
                rs = if years == 2 { "" } else { "s" },
            )
        }
        _ => {
            let domains = arg("domains")?.unwrap_or_default();
            let list: Vec<&str> = domains
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|d| !d.is_empty())
                .collect();
            format!(
                "Audit my domain portfolio of {n} domain{s}:\n{items}\n\n\
                 Use tldsnap's `portfolio_audit` tool with these domains (an entry written \
                 `name@registrar` is held at that registrar: pass it as an object with `name` \
                 and `registrar`). Report the yearly cost of keeping them now, the domains \
                 that renew cheaper elsewhere (where, and the yearly and 5-year saving), the \
                 ones best left where they are, and the totals. Mention any name that is not \
                 a registrable domain.",
                n = list.len(),
                s = if list.len() == 1 { "" } else { "s" },
                items = list
                    .iter()
                    .map(|d| format!("- {d}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        }
    };
    Ok(json!({
        "description": prompt.description,
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_fill_in_their_arguments_and_refuse_bad_ones() {
        let v =
            get(&json!({"name": "compare_registrars", "arguments": {"tld": ".dev", "years": "3"}}))
                .unwrap();
        let text = v["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains(".dev domain"), "{text}");
        assert!(text.contains("3 years"), "{text}");
        assert!(text.contains("2 renewals"), "{text}");
        let v = get(&json!({"name": "audit_portfolio", "arguments": {"domains": "a.com, b.dev\nc.io@porkbun"}}))
            .unwrap();
        let text = v["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("3 domains") && text.contains("- c.io@porkbun"),
            "{text}"
        );
        for bad in [
            json!({"name": "nope"}),
            json!({"name": "compare_registrars"}),
            json!({"name": "compare_registrars", "arguments": {"tld": "dev", "years": "99"}}),
            json!({"name": "compare_registrars", "arguments": {"tld": 3}}),
            json!({"name": "compare_registrars", "arguments": {"tld": "dev", "x": "1"}}),
            json!({"name": "audit_portfolio", "arguments": {"domains": "  "}}),
        ] {
            assert_eq!(get(&bad).unwrap_err().0, code::INVALID_PARAMS, "{bad}");
        }
        assert_eq!(list()["prompts"].as_array().unwrap().len(), 2);
    }
}
