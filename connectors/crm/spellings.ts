/**
 * How each CRM's exports spell the columns the kit reads (one home for what the kit knows of CRM headers): the
 * identifier roles, the record id, the columns a CRM needs back to take a file as an update, with the documents each
 * spelling was taken from. `connectors/normalize/columns.ts` chooses a file's columns from these.
 */
/** The identifier roles a column can play. */
export type IdentifierRole = 'domain' | 'linkedin_url' | 'company_name' | 'email' | 'linkedin_person';

/** Where a header spelling comes from. */
export type SpellingSource =
  | 'generic'
  | 'salesforce'
  | 'hubspot'
  | 'pipedrive'
  | 'dynamics'
  | 'zoho'
  | 'close'
  | 'apollo'
  | 'localized'
  | 'signal-kit';

/**
 * The documents each spelling was taken from: the export or import formats each tool documents for its standard
 * objects (accounts/companies/organizations/leads and contacts/persons). Custom fields are the user's own and are
 * reached with `--column`.
 */
export const SPELLING_SOURCES: Record<SpellingSource, string> = {
  generic: 'common spellings of hand-made lists and of the spec (spec 4.1 field names)',
  salesforce:
    'Salesforce: Data Loader / Data Export CSVs use field API names (Account: Id, Name, Website; Contact: Id, Email; ' +
    'Lead: Id, Company, Email, Website); report exports use field labels (Account ID, Account Name, Contact ID, Lead ID). ' +
    'Object Reference for Salesforce and Lightning Platform, Account/Contact/Lead objects',
  hubspot:
    'HubSpot: exported CSVs name columns by property label; companies: Record ID, Company name, Company Domain Name, ' +
    'Website URL, LinkedIn Company Page; contacts: Record ID, Email, LinkedIn URL. HubSpot Knowledge Base, ' +
    '"Export your records" and "HubSpot\'s default company properties"',
  pipedrive:
    'Pipedrive: spreadsheet exports prefix each field with its object ("Organization - Name", "Organization - ID", ' +
    '"Organization - Website", "Organization - LinkedIn profile", "Person - ID", "Person - Email"). Pipedrive Knowledge ' +
    'Base, "Exporting data" and "Importing data"',
  dynamics:
    'Dynamics 365: "Export to Excel" names columns by display name (Account Name, Website, Email) and puts the row id in ' +
    'a hidden "(Do Not Modify) Account" / "(Do Not Modify) Contact" column. Microsoft Learn, "Export data to Excel" ' +
    'and the account/contact entity references',
  zoho:
    'Zoho CRM: module exports name columns by field label with the id as "Record Id" (Accounts: Account Name, Website; ' +
    'Leads: Company, Email, Website; Contacts: Email). Zoho CRM Help, "Exporting Data" and "Standard fields"',
  close:
    "Close: lead CSV exports carry id, display_name and url (the lead's website), contact exports lead_id and " +
    'emails. Close API/Help, "Export leads" (type leads / contacts, CSV columns)',
  apollo:
    'Apollo: CSV exports of people and accounts name columns by label (Company, Website, Company Linkedin Url, Email, ' +
    'Person Linkedin Url) with the ids as "Apollo Contact Id" and "Apollo Account Id". Apollo Knowledge Base, "Export ' +
    'data from Apollo"',
  localized:
    'The same CRMs used in German, French and Spanish: exports name columns by the labels of the user interface ' +
    "language (HubSpot's Datensatz-ID, Domain-Name des Unternehmens, Website-URL; Salesforce report labels such as " +
    "Account-ID, Nom du compte, Nombre de la cuenta; Dynamics 365's hidden (Nicht ändern) / (Ne pas modifier) / (No " +
    "modificar) id columns; Pipedrive and Zoho labels). Taken from each product's localized help pages",
  'signal-kit': "signal-kit's own output (record_id, company_name, domain, linkedin_url), so an output reads back in",
};

export interface HeaderSpelling {
  spelling: string;
  source: SpellingSource;
}

const s = (source: SpellingSource, ...spellings: string[]): HeaderSpelling[] =>
  spellings.map((spelling) => ({ spelling, source }));

/**
 * Header spellings per role, most specific first: when several columns of a file play one role, each row uses the
 * first of them (in this order) that holds a usable value. The record id's spellings are in `RECORD_ID_SPELLINGS`.
 */
export const HEADER_SPELLINGS: Record<IdentifierRole, HeaderSpelling[]> = {
  domain: [
    ...s('generic', 'domain', 'company_domain', 'company domain', 'website', 'url', 'web site', 'homepage'),
    ...s('hubspot', 'Company Domain Name', 'Website URL'),
    ...s('salesforce', 'Website', 'Account Website'),
    ...s('pipedrive', 'Organization - Website'),
    ...s('dynamics', 'Website'),
    ...s('zoho', 'Website'),
    ...s('close', 'url', 'lead url'),
    ...s('apollo', 'Website', 'Company Website'),
    ...s(
      'localized',
      'Domain-Name des Unternehmens',
      'Unternehmensdomain',
      'Website-URL',
      'Webseite',
      'Organisation - Website',
      'Nom de domaine de l’entreprise',
      'URL du site web',
      'Site Web',
      'Organisation - Site web',
      'Nombre de dominio de la empresa',
      'URL del sitio web',
      'Sitio web',
      'Organización - Sitio web',
    ),
  ],
  linkedin_url: [
    ...s('generic', 'linkedin_url', 'company linkedin url', 'linkedin company url', 'company linkedin', 'linkedin'),
    ...s('hubspot', 'LinkedIn Company Page'),
    ...s('pipedrive', 'Organization - LinkedIn profile', 'Organization - LinkedIn'),
    ...s('zoho', 'LinkedIn Company Page'),
    ...s('apollo', 'Company Linkedin Url'),
    ...s(
      'localized',
      'LinkedIn-Unternehmensseite',
      'Page Entreprise LinkedIn',
      'Page LinkedIn de l’entreprise',
      'Página de empresa de LinkedIn',
    ),
  ],
  company_name: [
    ...s('generic', 'company_name', 'company', 'organization', 'organisation', 'account'),
    ...s('salesforce', 'Account Name', 'Name', 'Company'),
    ...s('hubspot', 'Company name', 'Name'),
    ...s('pipedrive', 'Organization - Name', 'Organization name'),
    ...s('dynamics', 'Account Name', 'Company Name'),
    ...s('zoho', 'Account Name', 'Company'),
    ...s('close', 'display_name', 'lead name', 'name'),
    ...s('apollo', 'Company', 'Company Name for Emails'),
    ...s(
      'localized',
      'Name des Unternehmens',
      'Firmenname',
      'Unternehmensname',
      'Accountname',
      'Organisation - Name',
      'Nom de l’entreprise',
      'Nom du compte',
      'Organisation - Nom',
      'Nombre de la empresa',
      'Nombre de la cuenta',
      'Nombre de cuenta',
      'Organización - Nombre',
    ),
  ],
  email: [
    ...s('generic', 'email', 'email_address', 'e-mail', 'address', 'work email'),
    ...s('salesforce', 'Email'),
    ...s('hubspot', 'Email'),
    ...s('pipedrive', 'Person - Email', 'Person - Email - Work'),
    ...s('dynamics', 'Email', 'Email Address 1'),
    ...s('zoho', 'Email'),
    ...s('close', 'emails', 'contact_emails', 'primary_contact_email', 'email'),
    ...s('apollo', 'Email'),
    ...s(
      'localized',
      'E-Mail',
      'E-Mail-Adresse',
      'Adresse e-mail',
      'Adresse électronique',
      'Correo',
      'Correo electrónico',
    ),
  ],
  linkedin_person: [
    ...s('generic', 'linkedin_url', 'contact_linkedin_url', 'person linkedin url', 'linkedin profile', 'linkedin'),
    ...s('hubspot', 'LinkedIn URL', 'LinkedIn Bio'),
    ...s('pipedrive', 'Person - LinkedIn profile', 'Person - LinkedIn'),
    ...s('salesforce', 'LinkedIn Profile'),
    ...s('apollo', 'Person Linkedin Url'),
    ...s('localized', 'LinkedIn-URL', 'URL LinkedIn', 'URL de LinkedIn'),
  ],
};

/** Header spellings of a record's own id in its system, most specific first. */
export const RECORD_ID_SPELLINGS: HeaderSpelling[] = [
  ...s('signal-kit', 'record_id'),
  ...s('generic', 'crm_id', 'crm id', 'external_id', 'id'),
  ...s('salesforce', 'Id', 'Account ID', 'Contact ID', 'Lead ID', 'Case Safe ID'),
  ...s('hubspot', 'Record ID', 'Company ID', 'Contact ID'),
  ...s('pipedrive', 'Organization - ID', 'Person - ID', 'Lead - ID', 'Deal - ID'),
  ...s('dynamics', '(Do Not Modify) Account', '(Do Not Modify) Contact', '(Do Not Modify) Lead'),
  ...s('zoho', 'Record Id', 'Account Id', 'Lead Id', 'Contact Id'),
  ...s('close', 'lead_id', 'contact_id', 'id'),
  ...s('apollo', 'Apollo Contact Id', 'Apollo Account Id'),
  ...s(
    'localized',
    'Datensatz-ID',
    'Account-ID',
    'Kontakt-ID',
    'Lead-ID',
    '(Nicht ändern) Firma',
    '(Nicht ändern) Konto',
    '(Nicht ändern) Kontakt',
    'Organisation - ID',
    'ID de la fiche d’informations',
    'ID de fiche d’informations',
    'ID du compte',
    'ID du contact',
    'ID de l’enregistrement',
    '(Ne pas modifier) Compte',
    '(Ne pas modifier) Contact',
    'ID de registro',
    'Id. de la cuenta',
    'ID de cuenta',
    'Id. del contacto',
    '(No modificar) Cuenta',
    '(No modificar) Contacto',
    'Organización - ID',
  ),
];

/**
 * Columns a CRM needs beside the record id to take a file back as an update, kept in the output whenever the input
 * has them: Dynamics 365's "Export to Excel" writes a row checksum and the modified-on time beside the hidden row id,
 * and its re-import updates a row only when they come back unchanged.
 */
export const CRM_UPDATE_COLUMNS = [
  '(Do Not Modify) Row Checksum',
  '(Do Not Modify) Modified On',
  '(Nicht ändern) Zeilenprüfsumme',
  '(Nicht ändern) Geändert am',
  '(Ne pas modifier) Somme de contrôle de ligne',
  '(Ne pas modifier) Date de modification',
  '(No modificar) Suma de comprobación de fila',
  '(No modificar) Fecha de modificación',
] as const;
