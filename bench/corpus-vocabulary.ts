import type { RecordType } from '../shared/domain/record.js';
import type { Domain } from './corpus-tenants.js';

/**
 * The corpus generator's words and sentence templates (bench/corpus-words.ts compiles them once). Each list is in
 * rough order of frequency, most common first: the order is the Zipf rank. Nouns are "singular" or
 * "singular:plural"; verbs "base", "base:past" or "base:past:ing".
 */
export const VOCABULARY = {
  nouns: `
    user team customer meeting report project issue account order invoice email call week update request plan note
    change review budget price contract policy process data:data file document version release feature error test
    server service system vendor manager engineer owner admin task item list schedule calendar deadline goal target
    number total cost fee rate discount margin revenue deal forecast quarter morning afternoon evening weekend trip
    booking table room office laptop phone screen app website page dashboard login password access permission role
    setting preference option mode theme language format template draft summary outline agenda slide deck proposal
    brief spec design mockup prototype feedback:feedback comment question answer reply message thread chat channel
    notification alert reminder warning backup upgrade patch fix workaround script job queue worker region bucket key
    token certificate domain network endpoint integration webhook plugin library package dependency framework tool
    workflow step stage phase milestone backlog story roadmap strategy priority risk blocker reason alternative
    tradeoff requirement constraint limit threshold capacity usage:usage load traffic:traffic speed memory storage:storage
    cache index query result entry field column schema model dataset:datasets sample experiment survey interview study
    analysis:analyses insight trend pattern habit routine mood tone concern complaint praise:praise refund shipment
    delivery address warehouse inventory stock product catalog category brand campaign launch event webinar conference
    workshop training course lesson session hire candidate offer salary bonus objective headcount contractor agency
    consultant lawyer accountant insurance:insurance claim bill statement balance loan tax receipt expense card bank
    transfer subscription tier license seat renewal cancellation lead prospect demo trial pilot rollout adoption
    engagement satisfaction score rating sentiment spreadsheet folder link attachment signature approval invitation
    calendar event venue menu dinner lunch breakfast coffee snack gift holiday vacation birthday anniversary school
    teacher doctor dentist appointment prescription pharmacy gym workout run:runs walk diet recipe grocery:groceries
    car garage repair mechanic apartment lease landlord rent utility internet printer monitor keyboard headset camera
    microphone charger cable battery warranty manual guide checklist handbook wiki article blog post newsletter podcast
    video recording transcript translation timezone deadline estimate quote baseline benchmark target trend outlier
    spike dip peak average median percentile sprint standup retro demo handoff escalation complaint survey response
    partner supplier distributor reseller investor board founder director intern mentor colleague neighbour friend
    family sister brother parent child:children kid partner spouse dog cat plant garden kitchen bathroom roof window
    door lock alarm sensor thermostat heater boiler freezer fridge oven washer dryer couch mattress chair desk lamp
  `,
  compounds: `
    dark mode, action item, due date, release notes, status page, root cause, credit card, phone number, time zone,
    meeting notes, expense report, board meeting, code review, kickoff meeting, quarterly report, annual plan,
    travel budget, performance review, team offsite, product roadmap, user interview, free trial, data export,
    password reset, mailing list, price increase, renewal date, purchase order, payment plan, support ticket,
    error rate, test suite, load balancer, feature flag, customer success, service level, cost estimate, weekly sync,
    project plan, launch date, sales call, status update, budget review, design review, hiring plan, org chart,
    shipping address, billing address, home office, parking spot, lunch order, team dinner, holiday party,
    email thread, slide deck, style guide, brand guidelines, landing page, signup flow, onboarding checklist
  `,
  verbs: `
    update send:sent review check fix deploy ship:shipped:shipping share schedule book cancel confirm approve reject
    sign renew move migrate upgrade test build:built release merge close open assign escalate resolve reply ask answer
    call email remind follow track monitor measure analyze compare estimate plan:planned:planning draft write:wrote
    edit publish present prepare organize order buy:bought pay:paid refund invoice charge transfer:transferred:transferring
    archive delete restore export import sync connect configure install enable disable reset:reset:resetting rotate
    revoke grant request submit:submitted:submitting file report log:logged:logging record document summarize discuss
    negotiate agree decide choose:chose prefer:preferred:preferring pick switch change replace remove add extend reduce
    increase lower raise delay postpone reschedule expedite prioritize investigate debug profile optimize refactor
    rename clean automate integrate validate verify audit benchmark train tune label classify sort filter search index
    cache load save store upload download print scan:scanned:scanning drop:dropped:dropping stop:stopped:stopping
    run:ran:running take:took give:gave make:made find:found keep:kept meet:met tell:told bring:brought hold:held
    leave:left lose:lost spend:spent forget:forgot:forgetting get:got:getting put:put:putting read:read say:said
    see:saw:seeing begin:began:beginning sell:sold feel:felt think:thought chat:chatted:chatting flag:flagged:flagging
    tag:tagged:tagging pin:pinned:pinning map:mapped:mapping plug:plugged:plugging skip:skipped:skipping
    commit:committed:committing refer:referred:referring swap:swapped:swapping wrap:wrapped:wrapping trim:trimmed:trimming
    handle notify apply copy clarify cover cook clean visit attend host join invite welcome thank praise apologize
    complain worry mention note explain describe suggest recommend propose offer accept decline promise expect wait
    hire onboard train coach mentor interview evaluate rate score rank forecast budget spend allocate approve
  `,
  adjectives: `
    new old current next last previous final open closed pending urgent critical important minor major small large
    quick slow late early weekly monthly daily annual quarterly internal external public private shared secure stable
    flaky broken missing duplicate wrong correct manual automatic dark light short long simple complex clear vague
    positive negative happy unhappy frustrated confused excited worried busy quiet strict flexible expensive cheap
    free premium basic standard custom default legacy modern remote local global regional mobile offline online
    detailed rough polished formal casual friendly blunt polite tense calm relaxed anxious eager reluctant skeptical
    supportive demanding patient impatient generous careful careless consistent inconsistent reliable unreliable
    healthy sick tired energetic cold warm hot rainy sunny crowded empty noisy vegetarian vegan spicy sweet fresh
    overdue upcoming recurring outstanding unpaid paid partial complete incomplete blocked unblocked approved rejected
    draft ready live stale fast heavy tiny huge odd unusual typical rare frequent occasional steady sudden gradual
  `,
  persons: `
    Sarah Alex Maria David Priya James Chen Emma Omar Laura Daniel Aisha Tom Sofia Michael Nina Raj Olivia Marco
    Hannah Lucas Fatima Ben Grace Kenji Elena Sam Leila Noah Anna Carlos Mia Ahmed Julia Ethan Yuki Zoe Ravi Chloé
    José Ingrid Kwame Mei Tariq Rosa Felix Amara Viktor Ines Jonas Nadia Hugo Lena Tomás Zoë Søren Björn Lucía
    Renée François Ngozi Mateo Dara Keiko Arjun Freya Idris Ola Pavel Siobhan Wei Yara Elif Gabriel Hana Ivan Kofi
    Liam Maya Nico Oren Paolo Quinn Rahul Tara Uma Vera Wanda Xavier Yusuf Zain Bianca Callum Dmitri Esme Farid Gita
    Hiro Imani Jasper Kai Lars Marisol Niamh Otto Petra Rania Stellan Thea Ugo Valentina Wren Ximena Yosef Zara
  `,
  tools: `
    Slack Jira GitHub Postgres Salesforce HubSpot Stripe Zendesk Notion Excel Zoom Gmail Outlook Figma Confluence
    Datadog Sentry Grafana Kubernetes Docker Terraform Redis Kafka Snowflake Airflow Tableau Looker QuickBooks Xero
    Shopify Intercom Linear Asana Trello Okta Twilio Mailchimp Calendly DocuSign Dropbox Teams WhatsApp Airtable Miro
    Loom Greenhouse Workday Gusto Epic Athena Kareo Expensify Brex Ramp Pipedrive Gong Outreach Segment Amplitude
    Mixpanel PagerDuty Opsgenie Vercel Netlify Heroku CircleCI Buildkite Vault Cloudflare Fastly
  `,
  cities: `
    Berlin, Lisbon, Austin, Toronto, London, New York, Singapore, Denver, Dublin, Seattle, Madrid, Osaka, Melbourne,
    Chicago, Bangalore, Nairobi, São Paulo, Kraków, Zürich, Boston, Lagos, Montréal, Paris, Amsterdam, Tokyo, Dubai
  `,
  when: `
    Friday, tomorrow, Monday, end of day, next week, Thursday, Wednesday, Tuesday, end of month, the end of the quarter,
    Monday morning, next Tuesday, the board meeting, the launch, noon, the 15th, March 3, Q3 close, the renewal,
    the offsite, year end, the holidays, June 30, the next sprint, the audit, September 1
  `,
  syllables: `
    ka ro vel mi tor an sa ri lo nex qua bel dra fi gor hal is jun kes lum mor nal ori pra quin rho sel tam ula vor
    wyn xa yel zor bri cal del fen gal hir
  `,
  clientFirst: `
    Northwind Bluepeak Redwood Silverline Ironclad Brightwater Oakridge Summit Harbor Pinecrest Granite Evergreen
    Lakeside Starlight Clearview Maple Westfield Cobalt Sunrise Highland Riverbend Stonegate Meridian Apex Crescent
    Horizon Vertex Orchard Beacon Falcon Copper Juniper Atlas Polaris Quarry Willow Canyon Aurora Sterling Keystone
  `,
  clientSecond: `
    Logistics Health Labs Foods Capital Dental Media Energy Robotics Legal Retail Analytics Partners Systems Bakery
    Studio Freight Insurance Pharma Realty Motors Outfitters Telecom Farms Clinic Software Hotels Airlines Textiles Brewing
  `,
  metadataSources: 'chat email slack api voice meeting import crm calendar sms',
  domains: {
    support: {
      nouns: `
        ticket refund login outage bug subscription plan charge chargeback reset macro queue escalation workaround
        article reply complaint screenshot browser device crash timeout sync upload export import integration invoice
        trial cancellation downgrade upgrade seat license migration latency notification password account:accounts
        permission billing:billing backlog satisfaction:satisfaction survey agent shift handover runbook status
        incident:incidents ETA apology credit voucher coupon shipment tracking return replacement warranty manual
      `,
      compounds: `
        support ticket, password reset, refund request, billing issue, login problem, first response, response time,
        help center, known issue, bug report, feature request, service credit, escalation path, satisfaction survey,
        chat transcript, ticket backlog, account lockout, duplicate charge, order status, return label
      `,
      roles: 'support-bot triage-agent helpdesk-assistant inbox-agent escalation-bot billing-helper',
    },
    sales: {
      nouns: `
        lead prospect pipeline quote proposal demo trial discount renewal contract champion procurement forecast
        quota territory commission upsell churn opportunity stakeholder budget decision signature legal redline
        pricing tier seat expansion objection competitor reference case RFP security questionnaire onboarding
        kickoff invoice PO signoff buyer sponsor executive intro referral webinar event booth conference deal:deals
        account:accounts region segment persona cadence sequence touchpoint followup meeting:meetings agenda
      `,
      compounds: `
        discovery call, pricing page, master agreement, order form, security review, legal review, close date,
        decision maker, economic buyer, renewal quote, annual contract, volume discount, pilot program,
        reference call, sales forecast, win rate, deal desk, mutual plan, budget approval, procurement portal
      `,
      roles: 'sales-assistant deal-desk-bot crm-agent outreach-bot forecast-helper renewal-agent',
    },
    engineering: {
      nouns: `
        deploy pipeline migration schema index cluster latency rollback flag canary endpoint service container build
        test coverage incident postmortem oncall runbook alert dashboard metric trace log:logs shard replica node
        region queue consumer producer topic partition lambda function API:APIs SDK client timeout retry:retries
        throttle quota certificate secret key:keys rotation dependency upgrade library branch commit PR review
        release tag changelog benchmark regression leak profile heap thread lock deadlock cache eviction
      `,
      compounds: `
        feature flag, load balancer, error budget, error rate, test suite, code review, pull request, release branch,
        database migration, schema change, cache hit rate, connection pool, memory leak, cold start, build time,
        incident review, on call rotation, rate limit, canary deploy, blue green deploy, disk usage, query plan
      `,
      roles: 'code-agent review-bot deploy-assistant oncall-agent ci-helper docs-bot',
    },
    health: {
      nouns: `
        patient appointment referral claim denial copay authorization insurance:insurance provider clinic code intake
        discharge prescription pharmacy lab result visit chart note:notes allergy vaccine screening followup reminder
        schedule waitlist cancellation noshow deductible coverage:coverage payer EOB statement balance plan form
        consent record:records transfer specialist physician nurse dentist therapist cardiology dermatology
        radiology imaging MRI xray bloodwork dosage refill portal message voicemail fax
      `,
      compounds: `
        prior authorization, insurance claim, claim denial, medical records, lab results, new patient, follow up visit,
        intake form, consent form, billing code, patient portal, annual physical, referral letter, appointment reminder,
        waiting list, payment plan, out of network, coverage check, discharge summary, prescription refill
      `,
      roles: 'front-desk-bot billing-agent scheduling-assistant intake-bot claims-helper portal-agent',
    },
    personal: {
      nouns: `
        flight hotel dinner reservation gym dentist birthday gift anniversary vacation school pickup grocery:groceries
        recipe allergy passport visa trip:trips party concert ticket:tickets babysitter plumber electrician rent lease
        mortgage insurance:insurance car service tire oil license renewal subscription streaming podcast book:books
        class lesson piano soccer swimming doctor checkup vaccine prescription pharmacy package delivery return
        wedding invitation rsvp playlist photo:photos album moving movers storage closet garage garden
      `,
      compounds: `
        flight booking, hotel room, dinner reservation, school pickup, birthday gift, grocery list, car service,
        dentist appointment, passport renewal, travel plans, gym membership, piano lesson, soccer practice,
        wedding invitation, moving day, window seat, aisle seat, packing list, weekly meal plan, date night
      `,
      roles: 'personal-assistant inbox-agent travel-bot family-helper calendar-agent errands-bot',
    },
  } satisfies Record<Domain, { nouns: string; compounds: string; roles: string }>,
  titles: {
    fact: [
      'The user prefers {a} {ns} for {cn}',
      '{p} is the main contact for {ds} at {c}',
      '{c} runs their {d} on {t}',
      "{p}'s {cn} is due by {w}",
      'The {cn} for {c} is {amt} per {period}',
      '{p} works from {city} and prefers {a} {ns}',
      'Their {d} team uses {t} for {ns}',
      '{p} {code} is the new {d} lead at {c}',
      'The user always wants the {cn} in {t}',
      '{c} has {num} {ds} on the {a} plan',
      'User prefers {cn} over {cn}',
      'The {code} account is managed by {p}',
    ],
    decision: [
      'Decided to {v} the {d} by {w}',
      'We chose {t} over {t} for the {n}',
      'Going with the {a} {cn} for {c}',
      '{p} decided to {v} the {cn} instead of {vg} it',
      'Agreed to {v} {ns} every {period}',
      'Chose to {v} the {d} after the {a} {n}',
      'Moving the {cn} to {t}',
      'Decision: {v} the {d} and keep the {cn}',
      'Project {code} will use {t} for {ns}',
      'We will not {v} the {cn} this {period}',
    ],
    exchange: [
      '{p} asked about the {a} {d}',
      'User asked how to {v} the {cn} in {t}',
      'Asked {p} whether {c} can {v} the {d}',
      '{p} replied that the {cn} is {a}',
      'Question from {c} about {vg} the {d}',
      'Explained to {p} why the {n} was {vd}',
      '{p} wanted to know when the {cn} will be {vd}',
      'Told {p} the {d} is {a} until {w}',
      'User asked for the {cn} from {code}',
    ],
    deliverable: [
      'Sent the {cn} to {p} at {c}',
      'Drafted the {a} {d} plan',
      'Shipped the {n} fix in {ver}',
      'Shared the {d} report for {c}',
      'Finished the {cn} summary for {p}',
      'Delivered {num} {ds} for the {cn}',
      'Wrote the {code} {d} proposal',
      'Published the {a} {cn} in {t}',
      'Prepared the {cn} deck for {w}',
    ],
    open_item: [
      'Follow up with {p} about the {d}',
      'Send {c} the revised {cn} by {w}',
      'Still need to {v} the {d} before {w}',
      'Waiting on {p} to {v} the {cn}',
      'Remind {p} to {v} the {n} by {w}',
      'Pending {d} review for {c}',
      'Open question on the {cn} for {code}',
      'Need to {v} the {a} {ds} by {w}',
      'Blocked: {cn} waiting on {c}',
    ],
    signal: [
      '{p} seems {a} about the {d}',
      '{c} keeps asking about the {cn}',
      '{p} tends to {v} {ns} at the last minute',
      'User gets {a} when the {n} is {a}',
      '{p} has been slow to answer about the {d}',
      'Repeated {a} feedback from {c} on {ds}',
      '{p} sounded {a} on the {cn} call',
      'Usage of the {d} at {c} dropped {pct} this {period}',
    ],
  } satisfies Record<RecordType, string[]>,
  bodies: {
    fact: [
      'The user prefers {a} {ns} and a {a} {cn}.',
      '{p} is the {a} contact at {c} and owns the {d}.',
      'Their {d} runs on {t}, with {num} {ds} in {city}.',
      '{p} lives in {city} and usually starts around nine.',
      'The {cn} for {c} renews every {period} at {amt}.',
      'For context, {c} has used {t} since {ver} and likes the {cn}.',
    ],
    decision: [
      'Decided to {v} the {d} instead of {vg} the {n}.',
      'We chose {t} over {t} because the {n} is {a}.',
      'Going with the {a} option: {vg} the {cn} by {w}.',
      '{p} signed off on {vg} the {d}; the {n} stays {a}.',
      'Agreed to {v} the {cn} by {pct} and revisit next {period}.',
      'The reason is the {a} {n}; {p} and {p} both agreed.',
    ],
    exchange: [
      '{p} asked whether the {d} could be {vd} by {w}.',
      'I replied that the {cn} is {a} and {p} would {v} it.',
      'User asked how to {v} the {n} in {t}; I sent the steps.',
      'Answered with the steps to {v} the {d} and a link to the {cn}.',
      '{p} said the {n} is {a} and asked us to {v} the {cn}.',
      'They asked again about {ds}; I said we would {v} them by {w}.',
    ],
    deliverable: [
      'Sent {p} the {a} {cn} with {num} {ns}.',
      'Drafted the {d} summary and shared it in {t}.',
      'Shipped {ver} of the {n} to {c}.',
      'Attached the {cn} ({num} pages) to {id}.',
      'Wrote the {a} plan for the {d}, with {num} {ns} and a timeline.',
      'The {cn} is in the shared folder as {code} {ver}.',
    ],
    open_item: [
      'Follow up with {p} about the {d} by {w}.',
      'Still waiting on {c} to {v} the {cn}.',
      'Need to {v} the {n} before {w}; it is blocked on {p}.',
      'Pending: {vg} the {d} for {c}.',
      'Promised {p} to {v} the {cn} by {w}.',
      'Next step is to {v} the {ds}; {p} owns it.',
    ],
    signal: [
      '{p} tends to {v} {ns} late in the day.',
      '{p} sounded {a} about the {d} again.',
      'Third time this {period} that {c} asked about the {cn}.',
      '{p} usually replies within {num} minutes but took {num} days this time.',
      'Noticed {p} avoids {vg} the {n} when {p} is around.',
      'Could mean {c} is looking at {t} instead of us.',
    ],
  } satisfies Record<RecordType, string[]>,
  generic: [
    '{p} mentioned that the {n} for {c} is still {a}.',
    'The {cn} was {vd} last {period} after {p} {vd} the {n}.',
    'We use {t} for the {n} and {t} for {ns}.',
    'Total so far is {amt} across {num} {ns}.',
    'See {id} for the {a} {n} history.',
    '{p} wants the {d} {vd} before {w}.',
    'It took {num} days to {v} the {d}, mostly because of the {a} {n}.',
    'The {d} changed by {pct} since last {period}.',
    'Notes from the call — {p} will {v} the {cn} and {p} will {v} the {d}.',
    'The {d} in {t} shows {num} {a} {ns}.',
    'Nothing else changed on the {n} side.',
    'Version {ver} of the {n} fixes the {a} {d}.',
    '{p} from {c} said the {ns} look {a} now.',
    'Budget for the {cn} is {amt}, about {pct} over plan.',
    'The {a} {n} only happens when the {d} is {a}.',
    '{p} {vs} the {cn} every {period} and {vs} the {ds} in {t}.',
    'Related: {id} and the {code} {d}.',
    'If the {n} is {a} again, {v} the {d} and tell {p}.',
    'Last {period} the {cn} was {a}; this {period} it looks {a}.',
    'Logged in {t} under {id}.',
    '{c} is based in {city} and has {num} people on the {d}.',
    'The {a} part is the {cn}, which depends on the {n}.',
    'Keep an eye on the {ds} until {w}.',
    'Original message: "please {v} the {cn} and {v} the {n}".',
  ],
  tails: [
    ' for {c}',
    ' before the {cn}',
    ' after the {cn}',
    ' because the {n} was {a}',
    ' with {p}',
    ' in {t}',
    ' so the {d} stays {a}',
    ' until {w}',
    ' and the {a} {d}',
    ', per {p}',
    ' ahead of the {cn}',
    ' on the {code} account',
  ],
};
