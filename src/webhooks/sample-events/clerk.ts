import { providerId, samplePerson } from './ids.js';

function clerkUser(nowMs: number, createdMs: number): Record<string, unknown> {
  const person = samplePerson();
  const emailId = providerId('idn', 27);
  return {
    backup_code_enabled: false,
    banned: false,
    birthday: '',
    created_at: createdMs,
    email_addresses: [
      {
        email_address: person.email,
        id: emailId,
        linked_to: [],
        object: 'email_address',
        reserved: false,
        verification: { attempts: null, expire_at: null, status: 'verified', strategy: 'email_code' },
      },
    ],
    external_accounts: [],
    external_id: null,
    first_name: person.firstName,
    gender: '',
    has_image: false,
    id: providerId('user', 27),
    image_url: 'https://img.clerk.com/placeholder',
    last_active_at: nowMs,
    last_name: person.lastName,
    last_sign_in_at: null,
    locked: false,
    object: 'user',
    password_enabled: true,
    phone_numbers: [],
    primary_email_address_id: emailId,
    primary_phone_number_id: null,
    primary_web3_wallet_id: null,
    private_metadata: {},
    public_metadata: {},
    two_factor_enabled: false,
    unsafe_metadata: {},
    updated_at: nowMs,
    username: null,
    web3_wallets: [],
  };
}

function clerkOrganization(nowMs: number, createdMs: number): Record<string, unknown> {
  const name = `${samplePerson().lastName} Labs`;
  return {
    admin_delete_enabled: true,
    created_at: createdMs,
    created_by: providerId('user', 27),
    has_image: false,
    id: providerId('org', 27),
    image_url: 'https://img.clerk.com/placeholder',
    max_allowed_memberships: 5,
    members_count: 1,
    name,
    object: 'organization',
    private_metadata: {},
    public_metadata: {},
    slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    updated_at: nowMs,
  };
}

function clerkMembership(nowMs: number, createdMs: number): Record<string, unknown> {
  const person = samplePerson();
  return {
    created_at: createdMs,
    id: providerId('orgmem', 27),
    object: 'organization_membership',
    organization: clerkOrganization(nowMs, createdMs),
    permissions: ['org:sys_memberships:read', 'org:sys_profile:read'],
    private_metadata: {},
    public_metadata: {},
    public_user_data: {
      first_name: person.firstName,
      has_image: false,
      identifier: person.email,
      image_url: 'https://img.clerk.com/placeholder',
      last_name: person.lastName,
      user_id: providerId('user', 27),
    },
    role: 'org:member',
    role_name: 'Member',
    updated_at: nowMs,
  };
}

/** The `data` object of a Clerk event: full object, or `{deleted, id, object}` for user/organization deletions. */
function clerkData(type: string, nowMs: number): Record<string, unknown> {
  const [resource, action] = type.split('.') as [string, string];
  const createdMs = action === 'created' ? nowMs : nowMs - 86_400_000;
  if (resource === 'user') {
    const user = clerkUser(nowMs, createdMs);
    return action === 'deleted' ? { deleted: true, id: user.id, object: 'user' } : user;
  }
  if (resource === 'organization') {
    const org = clerkOrganization(nowMs, createdMs);
    return action === 'deleted' ? { deleted: true, id: org.id, object: 'organization' } : org;
  }
  return clerkMembership(nowMs, createdMs);
}

/**
 * A Clerk webhook event as Svix delivers it: `{data, event_attributes,
 * instance_id, object: "event", timestamp (ms), type}`.
 * https://clerk.com/docs/webhooks/overview#payload-structure
 */
export function buildClerkSample(type: string, nowMs: number): Record<string, unknown> {
  return {
    data: clerkData(type, nowMs),
    event_attributes: { http_request: { client_ip: '203.0.113.7', user_agent: 'hookrun-send' } },
    instance_id: providerId('ins', 27),
    object: 'event',
    timestamp: nowMs,
    type,
  };
}
